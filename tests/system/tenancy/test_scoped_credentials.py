"""A tool inside A's job cannot reach B's session with the ambient credentials.

moto with IAM enforcement on: the agent function runs as an IAM user allowed only to assume
the tenant role; the tenant role carries the policy the CDK construct synthesizes
(``owners/*`` read + put, the model), read from the isolated stack's template. Each slice of
the real agent handler assumes it with the job's session policy (`elsai.serverless.scoped`),
so the tool below, which calls boto3 with whatever credentials the process has, reaches only
its own job's session and records.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.core.authorization import disable_iam_authentication, enable_iam_authentication

from elsai import aws_clients
from elsai.serverless import scoped
from elsai.serverless.contract import service_keys
from elsai.serverless.scoped import TENANT_ROLE_ENV, job_storage_prefix, owned_job_id
from elsai.session import S3SessionManager
from elsai.session.layout import keys
from tests.system.tenancy import tenancy_agents
from tests.system.tenancy.moto_session_policies import session_policies_enforced  # noqa: F401 - a fixture

REGION, BUCKET = "us-east-1", "elsai-tenancy-tests"
TAG_A, TAG_B = service_keys.owner_tag("iam:alice"), service_keys.owner_tag("iam:bob")
JOB_A = owned_job_id(TAG_A, "job-a")
B_SESSION = service_keys.owner_prefix(TAG_B) + keys.session_key("s1")
A_SESSION = service_keys.owner_prefix(TAG_A) + keys.session_key("s1")
A_OTHER_SESSION = service_keys.owner_prefix(TAG_A) + keys.session_key("s2")


@dataclass
class Context:
    """The LambdaContext attributes the handler reads."""

    function_name: str = "elsai-agent"
    function_version: str = "$LATEST"
    invoked_function_arn: str = f"arn:aws:lambda:{REGION}:123456789012:function:elsai-agent"
    memory_limit_in_mb: int = 1024
    aws_request_id: str = "req-1"

    def get_remaining_time_in_millis(self) -> int:
        return 600_000


def _policy(statements: list[dict[str, Any]]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": statements})


def _seed(prefix: str, session_id: str) -> None:
    """A stored session under `prefix` (written before IAM enforcement starts)."""
    manager = S3SessionManager(session_id=session_id, bucket=BUCKET, prefix=prefix)
    manager.ensure_session()


def _resolve(node: Any, pseudo: dict[str, str]) -> Any:
    """A template value with Ref / GetAtt / Join replaced by this test account's values."""
    if isinstance(node, list):
        return [_resolve(n, pseudo) for n in node]
    if isinstance(node, dict) and len(node) == 1:
        ((fn, arg),) = node.items()
        if fn == "Fn::Join":
            return str(arg[0]).join(str(_resolve(p, pseudo)) for p in arg[1])
        if fn == "Ref":
            return pseudo[arg]
        if fn == "Fn::GetAtt" and arg[0].startswith("SessionsBucket") and arg[1] == "Arn":
            return f"arn:aws:s3:::{BUCKET}"
        raise AssertionError(f"unexpected intrinsic in the tenant role's policy: {node}")
    if isinstance(node, dict):
        return {k: _resolve(v, pseudo) for k, v in node.items()}
    return node


@pytest.fixture(scope="module")
def tenant_statements() -> list[dict[str, Any]]:
    """The tenant role's policy as `elsai/cdk/tenancy.py` synthesizes it."""
    from elsai.local.definition import DEFAULT_PSEUDO
    from infra.synth import synth_template

    template = synth_template({"aws:cdk:bundling-stacks": []}, nag=False)  # the default stack
    (policy,) = [
        v["Properties"] for v in template["Resources"].values()
        if v["Type"] == "AWS::IAM::Policy"
        and any(r["Ref"].startswith("TenantRole") for r in v["Properties"]["Roles"])
    ]  # fmt: skip
    statements = _resolve(policy["PolicyDocument"]["Statement"], DEFAULT_PSEUDO)
    assert isinstance(statements, list)
    return statements


@pytest.fixture
def account(
    monkeypatch: pytest.MonkeyPatch,
    tenant_statements: list[dict[str, Any]],
    session_policies_enforced: None,  # noqa: F811 - the fixture imported above
) -> Iterator[str]:
    """Function user + tenant role + two owners' sessions; yields the function's key id."""
    for name, value in {
        "AWS_DEFAULT_REGION": REGION, "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing", "ELSAI_SESSIONS_BUCKET": BUCKET,
        "POWERTOOLS_SERVICE_NAME": "elsai", "POWERTOOLS_METRICS_NAMESPACE": "elsai",
        "ELSAI_AGENT_FACTORY": "tests.system.tenancy.tenancy_agents:build_agent",
    }.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    for name in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    aws_clients.clear()
    # Scoped credentials are cached per role and policy; each test's moto account is new.
    monkeypatch.setattr(scoped, "_cache", {})
    with mock_aws():
        boto3.client("s3").create_bucket(Bucket=BUCKET)
        for prefix, session_id in [
            (service_keys.owner_prefix(TAG_B), "s1"),
            (service_keys.owner_prefix(TAG_A), "s2"),
        ]:
            _seed(prefix, session_id)
        iam = boto3.client("iam")
        user = iam.create_user(UserName="agent-function")["User"]["Arn"]
        role = iam.create_role(
            RoleName="elsai-tenant",
            AssumeRolePolicyDocument=_policy([{"Effect": "Allow", "Action": "sts:AssumeRole",
                                               "Principal": {"AWS": user}}]),
        )["Role"]["Arn"]  # fmt: skip
        iam.put_role_policy(
            RoleName="elsai-tenant", PolicyName="owners", PolicyDocument=_policy(tenant_statements)
        )
        iam.put_user_policy(UserName="agent-function", PolicyName="assume", PolicyDocument=_policy(
            [{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": role}]
        ))  # fmt: skip
        key = iam.create_access_key(UserName="agent-function")["AccessKey"]
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", key["AccessKeyId"])
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", key["SecretAccessKey"])
        monkeypatch.setenv(TENANT_ROLE_ENV, role)
        aws_clients.clear()
        tenancy_agents.RESULTS.clear()
        with enable_iam_authentication():
            yield str(key["AccessKeyId"])
    aws_clients.clear()


def _slice(job_id: str, probes: list[tuple[str, str]], monkeypatch: pytest.MonkeyPatch) -> Any:
    from elsai_lambdas import agent_handler

    monkeypatch.setenv("TENANCY_PROBES", json.dumps(probes))
    event = {"action": "run_slice", "job_id": job_id, "execution_id": f"exec-{job_id}",
             "session_id": "s1", "agent_id": "agent", "prompt": "look around", "slice": 0}  # fmt: skip
    return agent_handler.handler(event, Context())


def test_a_tool_cannot_read_or_write_another_owners_session(
    account: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    probes = [
        ("get", B_SESSION),  # B's session: refused
        ("put", B_SESSION),
        ("get", A_OTHER_SESSION),  # A's own other session: not this job's either
        ("get", keys.session_key("s1")),  # the bucket root (the function role's old reach)
        ("get", A_SESSION),  # this job's own session: readable
    ]
    result = _slice(JOB_A, probes, monkeypatch)
    assert result["status"] == "completed", result
    seen = tenancy_agents.RESULTS
    assert seen[:4] == ["refused: AccessDenied"] * 4, seen
    assert seen[4].startswith("{"), seen  # session.json of A's s1, written by this slice
    assert os.environ["AWS_ACCESS_KEY_ID"] == account  # the function's own credentials are back
    with disable_iam_authentication():
        s3 = boto3.client("s3")
        b = s3.get_object(Bucket=BUCKET, Key=B_SESSION)["Body"].read()
        assert b"overwritten" not in b
        stored = s3.list_objects_v2(Bucket=BUCKET, Prefix=job_storage_prefix(JOB_A))
        names = {o["Key"] for o in stored["Contents"]}
    # The session store wrote A's transcript with the scoped credentials, under A's prefix.
    messages = service_keys.owner_prefix(TAG_A) + keys.messages_prefix("s1", "agent")
    assert sum(name.startswith(messages) for name in names) == len(probes) * 2 + 2


def test_the_same_probe_from_bobs_own_job_is_allowed(
    account: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusal above is the session policy's doing: B's own job may read B's session."""
    result = _slice(owned_job_id(TAG_B, "job-b"), [("get", B_SESSION)], monkeypatch)
    assert result["status"] == "completed", result
    assert tenancy_agents.RESULTS[0].startswith("{"), tenancy_agents.RESULTS


def test_without_a_tenant_role_the_slice_runs_on_the_function_credentials(
    account: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No role configured: nothing is assumed (and this user may not touch S3 at all)."""
    monkeypatch.delenv(TENANT_ROLE_ENV)
    with pytest.raises(Exception, match="AccessDenied"):
        _slice(JOB_A, [], monkeypatch)


def test_ambient_swap_hides_other_credential_sources_and_restores_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from datetime import UTC, datetime

    from elsai.serverless.scoped import ambient_credentials

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "FUNCTION")
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:9001/creds")
    monkeypatch.setenv("AWS_PROFILE", "function-profile")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    scoped = {"AccessKeyId": "SCOPED", "SecretAccessKey": "s", "SessionToken": "t",
              "Expiration": datetime.now(UTC)}  # fmt: skip
    with ambient_credentials(scoped):
        assert os.environ["AWS_ACCESS_KEY_ID"] == "SCOPED"
        assert "AWS_CONTAINER_CREDENTIALS_FULL_URI" not in os.environ
        assert "AWS_PROFILE" not in os.environ
        client = aws_clients.shared_client("s3", region_name=REGION)
        assert client._request_signer._credentials.access_key == "SCOPED"
    assert os.environ["AWS_ACCESS_KEY_ID"] == "FUNCTION"
    assert os.environ["AWS_CONTAINER_CREDENTIALS_FULL_URI"] == "http://127.0.0.1:9001/creds"
    assert os.environ["AWS_PROFILE"] == "function-profile"
    assert "AWS_SESSION_TOKEN" not in os.environ
    assert not [k for k in aws_clients._clients if "SCOPED" in k[-1]]  # no client per job left


def _listings(seen: list[str]) -> list[str]:
    return [s if s.startswith("refused") else s.split(": ", 1)[0] for s in seen]


#: Key names a tool must not learn: the bucket, every owner, another owner, A's other session.
FOREIGN_LISTINGS = [
    ("list", ""),
    ("list", service_keys.OWNERS_PREFIX),
    ("list", service_keys.owner_prefix(TAG_B)),
    ("list", service_keys.owner_prefix(TAG_A)),
    ("list", service_keys.owner_prefix(TAG_A) + keys.session_dir("s2")),
]


def test_a_tool_cannot_list_other_sessions_key_names(
    account: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = service_keys.owner_prefix(TAG_A) + keys.session_dir("s1")
    result = _slice(JOB_A, [*FOREIGN_LISTINGS, ("list", own)], monkeypatch)
    assert result["status"] == "completed", result
    seen = tenancy_agents.RESULTS
    assert seen[:5] == ["refused: AccessDenied"] * 5, seen
    names = seen[5].removeprefix("listed: ").split(",")
    assert names and all(name.startswith(own) for name in names), seen[5]


def test_a_listing_policy_without_prefix_conditions_fails_the_test_above(
    account: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The evaluation is not vacuous: yesterday's policy (ListBucket on the bucket) lets the
    same probes through, so the listing test fails on it."""
    narrow = scoped.session_policy

    def broad(*args: Any, **kwargs: Any) -> dict[str, Any]:
        policy = narrow(*args, **kwargs)
        for stmt in policy["Statement"]:
            stmt.pop("Condition", None)
        return policy

    monkeypatch.setattr(scoped, "session_policy", broad)
    _slice(JOB_A, FOREIGN_LISTINGS, monkeypatch)
    assert _listings(tenancy_agents.RESULTS) == ["listed"] * 5, tenancy_agents.RESULTS
    assert B_SESSION in tenancy_agents.RESULTS[0]  # another owner's session id, seen


def test_the_first_slice_tells_missing_from_forbidden(account: str) -> None:
    """Under the job's policy a missing key of its own reads as missing (S3 says 403 to a
    caller that may not list the bucket unconditionally; the store then lists that key),
    and another owner's key, existing or not, is an error, never "missing"."""
    from elsai.serverless.scoped import job_credentials
    from elsai.session.storage.base import StorageError
    from elsai.session.storage.s3 import S3Storage

    with job_credentials(JOB_A, "s1", BUCKET) as scoped_on:
        assert scoped_on
        own = S3Storage(BUCKET, prefix=service_keys.owner_prefix(TAG_A))
        raw = own._client
        with pytest.raises(raw.exceptions.ClientError, match="AccessDenied"):
            raw.get_object(Bucket=BUCKET, Key=A_SESSION)  # what S3 itself answers: 403
        assert own.read(keys.session_key("s1")) is None
        assert own.read(f"jobs/{JOB_A}/task_token.json") is None
        other = S3Storage(BUCKET, prefix=service_keys.owner_prefix(TAG_B))
        with pytest.raises(StorageError, match="AccessDenied"):
            other.read(keys.session_key("s1"))  # exists: forbidden
        with pytest.raises(StorageError, match="AccessDenied"):
            other.read(keys.session_key("never-written"))  # missing, but not ours to know


def test_everything_a_job_needs_works_under_its_policy(
    account: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first slice, a park on a task token, and a second slice that resumes the session."""
    from elsai_lambdas import agent_handler

    assert _slice(JOB_A, [], monkeypatch)["status"] == "completed"
    parked = agent_handler.handler(
        {"action": "park", "job_id": JOB_A, "session_id": "s1", "agent_id": "agent",
         "task_token": "token-1", "interrupts": []},
        Context(),
    )  # fmt: skip
    assert parked == {"parked": True}
    again = _slice(JOB_A, [("get", A_SESSION)], monkeypatch)
    assert again["status"] == "completed", again
    with disable_iam_authentication():
        token_key = job_storage_prefix(JOB_A) + service_keys.job_token_key(JOB_A)
        s3 = boto3.client("s3")
        stored = s3.get_object(Bucket=BUCKET, Key=token_key)["Body"].read()
        tags = s3.get_object_tagging(Bucket=BUCKET, Key=token_key)["TagSet"]
    assert json.loads(stored)["task_token"] == "token-1"
    # The tag the bucket's lifecycle rule expires it by (no prefix rule reaches owners/*/jobs/).
    assert tags == [{"Key": service_keys.EXPIRING_TAG[0], "Value": service_keys.EXPIRING_TAG[1]}]
