"""Per-job scoped credentials: a slice's agent reaches only its own job's storage.

Why: the agent function's role can read and write every session in the bucket, and the
user's tools run in the same process. A tool talked into it (prompt injection) could use
the ambient credentials (``AWS_ACCESS_KEY_ID``..., boto3's default session) to read other
callers' transcripts. So, when the stack names a tenant role (`TENANT_ROLE_ENV`), each slice
assumes it with a *session policy* naming exactly this job's objects:

- ``<owner prefix>session_<session_id>/*`` (the session the job runs on) and
  ``<owner prefix>jobs/<job_id>/*`` (its parked token, answers, cancel record): get + put
  (with the object tag a parked token's age expiry matches, `service_keys.EXPIRING_TAG`);
- ``s3:ListBucket`` on the bucket, only for those two prefixes (an ``s3:prefix`` condition):
  a tool cannot list other sessions' key names (session ids, owner tags). S3 answers 404
  rather than 403 for a missing key only to a caller allowed to list, and a GetObject request
  carries no ``s3:prefix``, so a missing key of the job's own may come back as 403; the store
  then tells missing from forbidden by listing that one key (`elsai.session.storage.s3`);
- ``*``, ``?`` and ``$`` in an id are written as IAM's ``${*}``, ``${?}``, ``${$}``, so an id
  is never a wildcard (a session named ``*`` is that one session, not all of them);
- every non-S3 action the role itself allows (the model call), unchanged.

The agent then runs with those credentials as its ambient ones, and the session store uses
them too, so a bug in the store cannot reach another session either. AWS evaluates the
intersection of the role's policy and the session policy; the role allows ``owners/*`` only.

Which owner a job belongs to is part of its id: the jobs API names each job it starts
``o<owner tag>-<rest>`` (`owned_job_id`), and only the API starts jobs, so the tag in a job
id is trustworthy. A job id without a tag (an operator's own execution) uses the bucket root.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

from elsai.ids import validate_id
from elsai.serverless.contract import service_keys
from elsai.session.layout import keys

#: The role a slice assumes for its agent (set by the CDK stack when isolation is on).
TENANT_ROLE_ENV = "ELSAI_TENANT_ROLE_ARN"
#: Seconds a set of scoped credentials lives (role chaining allows at most one hour).
CREDENTIALS_SECONDS = 3600
#: Credentials are reused in a warm container while at least this much of them is left:
#: more than a whole Lambda invocation (15 min), so they never expire mid-slice.
REUSE_MARGIN_SECONDS = 20 * 60

_JOB_RE = re.compile(rf"^o([0-9a-f]{{{service_keys.OWNER_TAG_CHARS}}})-.")
_CREDENTIAL_VARS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
#: Other ways to the function's own credentials (a profile, the container credentials
#: endpoint that SnapStart functions use): hidden while a scoped block runs.
_HIDDEN_VARS = (
    "AWS_PROFILE",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
)
_cache: dict[str, dict[str, Any]] = {}
_env_lock = threading.Lock()


def owned_job_id(tag: str, rest: str) -> str:
    """The id of a job of the owner with `tag` (`rest` makes it unique)."""
    service_keys.owner_prefix(tag)  # a malformed tag is refused here, not trusted later
    return f"o{tag}-{rest}"


def job_owner_tag(job_id: str) -> str | None:
    """The owner tag a job id carries, or None for a job id without one."""
    match = _JOB_RE.match(job_id)
    return match.group(1) if match else None


def job_storage_prefix(job_id: str) -> str:
    """The storage prefix of job `job_id`'s owner ("" for a job without an owner)."""
    tag = job_owner_tag(job_id)
    return service_keys.owner_prefix(tag) if tag else ""


_IAM_ESCAPES = {"*": "${*}", "?": "${?}", "$": "${$}"}


def literal(text: str) -> str:
    """`text` as an IAM pattern matching only itself (``*``, ``?``, ``$`` escaped)."""
    return "".join(_IAM_ESCAPES.get(c, c) for c in text)


def session_policy(
    bucket: str, prefix: str, session_id: str, job_id: str, partition: str = "aws"
) -> dict[str, Any]:
    """The session policy of one job: its own session and job records, nothing else in S3."""
    validate_id(session_id, "session_id")
    validate_id(job_id, "job_id")
    own = [
        literal(prefix + keys.session_dir(session_id)) + "*",
        literal(prefix + service_keys.job_dir(job_id)) + "*",
    ]
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "OwnSessionAndJob",
                "Effect": "Allow",
                # Tagging: a parked token carries the tag its lifecycle expiry matches.
                "Action": ["s3:GetObject", "s3:PutObject", "s3:PutObjectTagging"],
                "Resource": [f"arn:{partition}:s3:::{bucket}/{pattern}" for pattern in own],
            },
            {
                "Sid": "ListOwnPrefixesOnly",
                "Effect": "Allow",
                "Action": "s3:ListBucket",
                "Resource": f"arn:{partition}:s3:::{bucket}",
                "Condition": {"StringLike": {"s3:prefix": own}},
            },
            {"Sid": "EverythingButS3", "Effect": "Allow", "NotAction": "s3:*", "Resource": "*"},
        ],
    }


def assume_scoped(
    role_arn: str, policy: dict[str, Any], session_name: str, sts: Any = None
) -> dict[str, Any]:
    """Credentials of `role_arn` narrowed by `policy` (cached per role and policy)."""
    text = json.dumps(policy, separators=(",", ":"), sort_keys=True)
    cache_key = f"{role_arn}\n{text}"
    for stale in [k for k, c in _cache.items() if not _fresh(c)]:
        del _cache[stale]  # a warm container serves many jobs: keep only usable entries
    cached = _cache.get(cache_key)
    if cached is not None:
        return cached
    if sts is None:
        from elsai.aws_clients import shared_client

        sts = shared_client("sts")
    answer = sts.assume_role(
        RoleArn=role_arn,
        RoleSessionName=session_name[:64],
        Policy=text,
        DurationSeconds=CREDENTIALS_SECONDS,
    )
    credentials: dict[str, Any] = answer["Credentials"]
    _cache[cache_key] = credentials
    return credentials


def _fresh(credentials: dict[str, Any]) -> bool:
    return bool(credentials["Expiration"].timestamp() - time.time() > REUSE_MARGIN_SECONDS)


@contextlib.contextmanager
def ambient_credentials(credentials: dict[str, Any]) -> Iterator[None]:
    """Make `credentials` the process's ambient AWS credentials while the block runs.

    Env vars come first in boto3's credential chain; boto3's default session is dropped so
    that ``boto3.client(...)`` builds a new one from them; elsai's shared clients are keyed
    by ``AWS_ACCESS_KEY_ID``, so they are rebuilt too (and dropped afterwards). The other
    roads to the function's own credentials (`_HIDDEN_VARS`) are closed meanwhile.
    Everything is restored afterwards.
    """
    values = (
        credentials["AccessKeyId"],
        credentials["SecretAccessKey"],
        credentials["SessionToken"],
    )
    from elsai.aws_clients import forget_access_key

    with _env_lock:
        saved = {name: os.environ.get(name) for name in (*_CREDENTIAL_VARS, *_HIDDEN_VARS)}
        for name in _HIDDEN_VARS:
            os.environ.pop(name, None)
        os.environ.update(dict(zip(_CREDENTIAL_VARS, values, strict=True)))
        default_session = _swap_default_session(None)
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
            _swap_default_session(default_session)
            forget_access_key(values[0])


def _swap_default_session(session: Any) -> Any:
    import boto3

    previous = boto3.DEFAULT_SESSION
    boto3.DEFAULT_SESSION = session
    return previous


@contextlib.contextmanager
def job_credentials(job_id: str, session_id: str, bucket: str) -> Iterator[bool]:
    """Run the block with credentials scoped to this job, if the stack names a tenant role.

    Yields whether scoping is on. Without `TENANT_ROLE_ENV` the block runs as before.
    """
    role_arn = os.environ.get(TENANT_ROLE_ENV, "")
    if not role_arn:
        yield False
        return
    partition = role_arn.split(":")[1] if role_arn.count(":") >= 5 else "aws"
    policy = session_policy(bucket, job_storage_prefix(job_id), session_id, job_id, partition)
    credentials = assume_scoped(role_arn, policy, f"job-{job_id}")
    with ambient_credentials(credentials):
        yield True
