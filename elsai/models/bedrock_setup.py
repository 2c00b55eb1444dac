"""Bedrock set-up rules shared by BedrockModel and `elsai local run --model bedrock`.

One region rule everywhere, and a missing-credentials message that says what to do, so a
new user's first `Agent()("hello")` fails in one clear line instead of a deep traceback.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import boto3

DEFAULT_REGION = "us-west-2"


def resolve_region(boto_session: boto3.Session | None = None) -> str:
    """The one region rule for Bedrock.

    An explicit session's region, else AWS_REGION, else what boto3 reads
    (AWS_DEFAULT_REGION, the profile's region), else us-west-2 (the spec's default).
    """
    if boto_session is not None and boto_session.region_name:
        return str(boto_session.region_name)
    import botocore.session

    configured = os.environ.get("AWS_REGION")
    if not configured:
        configured = botocore.session.get_session().get_config_variable("region")
    return str(configured or DEFAULT_REGION)


def no_credentials_message(model_id: str, region: str) -> str:
    """What to do when no AWS credentials exist: configure them, or go offline."""
    return (
        f"Amazon Bedrock model {model_id!r} in region {region!r} needs AWS credentials, and "
        "none were found. Configure them with `aws configure` (or AWS_PROFILE, or "
        "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or an IAM role), set the region with "
        "AWS_REGION, or run offline with model=ScriptedModel([...]) / "
        "PositionalScriptedModel([...]) from elsai.models."
    )
