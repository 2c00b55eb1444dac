"""Bedrock set-up rules shared by BedrockModel and `elsai local run --model bedrock`.

One region rule everywhere, a missing-credentials message that says what to do, so a new
user's first `Agent()("hello")` fails in one clear line instead of a deep traceback, and the
steps that give an account access to a model (a refused call's `ModelAccessDeniedError`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import boto3

DEFAULT_REGION = "us-west-2"

ACCESS_STEPS = (
    "An administrator must enable this model for the account once: in the Bedrock console open "
    "the model catalog, pick the model and request/submit access (for Anthropic models the "
    "first-use form with the use case details); Bedrock then subscribes the account through "
    "AWS Marketplace, which needs aws-marketplace:Subscribe and aws-marketplace:ViewSubscriptions "
    "for whoever does it the first time. If the message names an IAM action instead, the role "
    "the model runs with lacks bedrock:InvokeModel* on this model's ARN (deployed: the agent "
    "role, granted for modelId in cdk.json). See docs/deploying.md, 'Bedrock first use'."
)


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
