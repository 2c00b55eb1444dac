"""Clients and configuration the jobs API talks to AWS with.

Clients are shared per process: a warm Lambda container answers many requests with one.
Functions, not module constants, so tests and the local runtime can point them elsewhere.
"""

import os
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from elsai.aws_clients import shared_client

if TYPE_CHECKING:
    from elsai.session.storage.s3 import S3Storage


def sfn() -> Any:
    """The Step Functions client."""
    return shared_client("stepfunctions")


def s3() -> Any:
    """The S3 client."""
    return shared_client("s3")


def machine_arn() -> str:
    """ARN of the jobs state machine (set by the CDK stack)."""
    return os.environ["ELSAI_STATE_MACHINE_ARN"]


def bucket() -> str:
    """Name of the sessions bucket (set by the CDK stack)."""
    return os.environ["ELSAI_SESSIONS_BUCKET"]


def storage(prefix: str | None = None) -> "S3Storage":
    """The session store, read through the same backend the agents write with.

    Under `prefix`, else the storage prefix of the request's owner (tenant isolation on).
    """
    from elsai.session.storage.s3 import S3Storage  # only routes that read S3 pay for it
    from elsai_lambdas.jobs_api.owner import storage_prefix

    where = storage_prefix() if prefix is None else prefix
    return S3Storage(bucket=bucket(), prefix=where, client=s3())


def error_code(exc: ClientError) -> str:
    """The AWS error code of a botocore ClientError ("" if it has none)."""
    return str(exc.response.get("Error", {}).get("Code", ""))
