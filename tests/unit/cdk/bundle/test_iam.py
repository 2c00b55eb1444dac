"""The handlers under IAM enforcement, with exactly the permissions the synthesized roles grant.

moto normally allows everything; here every request is authorized against a moto IAM user that
holds the role's statements from the template (intrinsics resolved to the moto resources). A
permission the stack forgets to grant fails these tests; dropping `s3:PutObject` shows it does.

This is the single-caller layout (``tenantIsolation=false``), where the function roles reach
S3 themselves; the default, isolated layout (the tenant role, narrowed per job) is proven the
same way in tests/system/tenancy/test_scoped_credentials.py.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.core.authorization import enable_iam_authentication

from elsai import aws_clients
from elsai.local.definition import state_machine_logical_id
from elsai.session.layout import keys
from tests.unit.cdk.bundle.iam_helpers import (
    ACCOUNT,
    REGION,
    resolve,
    resource_values,
    role_statements,
    user_with_policy,
    without_action,
)

REPO_ROOT = Path(__file__).resolve().parents[4]
EVENTS = REPO_ROOT / "tests" / "unit" / "handlers" / "jobs_api" / "events"
# Read when the handler modules are imported (module-level Tracer and Metrics), as on Lambda.
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "elsai")


class Context:
    """The LambdaContext attributes Powertools reads."""

    function_name = "elsai"
    function_version = "$LATEST"
    invoked_function_arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:elsai"
    memory_limit_in_mb = 1024
    aws_request_id = "req-iam"
    log_group_name = "/aws/lambda/elsai"
    log_stream_name = "iam"

    def get_remaining_time_in_millis(self) -> int:
        return 900_000


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    from infra.synth import synth_template

    return synth_template({"tenantIsolation": "false", "aws:cdk:bundling-stacks": []}, nag=False)


@pytest.fixture
def sfn_resource_arns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let moto see which Step Functions resource a request names.

    moto authorizes an action against the resource its response class reports (S3 reports the
    bucket/key; SQS, IAM and STS theirs) and against "*" otherwise, where a statement scoped to
    an ARN never matches. Step Functions reports none, so the API role's scoped statements would
    be refused wholesale: report the execution or state machine ARN the request carries.
    """
    from moto.stepfunctions.responses import StepFunctionResponse

    def determine(self: Any) -> str:
        body = json.loads(self.body or "{}")
        return str(body.get("executionArn") or body.get("stateMachineArn") or "*")

    monkeypatch.setattr(StepFunctionResponse, "_determine_resource", determine, raising=False)


@pytest.fixture
def account(
    aws_env: None,
    sfn_resource_arns: None,
    template: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[dict[str, Any]]:
    """moto with the stack's bucket and state machine, and the role statements resolved to them."""
    bucket = f"sessions-{uuid.uuid4().hex[:12]}"
    machine_props = template["Resources"][state_machine_logical_id(template)]["Properties"]
    machine_name = machine_props.get("StateMachineName", "jobs")
    with mock_aws():
        boto3.client("s3").create_bucket(Bucket=bucket)
        machine_arn = boto3.client("stepfunctions").create_state_machine(
            name=machine_name,
            definition=json.dumps(
                {"StartAt": "Wait", "States": {"Wait": {"Type": "Pass", "End": True}}}
            ),
            roleArn=f"arn:aws:iam::{ACCOUNT}:role/jobs",
        )["stateMachineArn"]
        values = resource_values(
            template, {"SessionsBucket": bucket, "JobsStateMachine": machine_name}
        )
        monkeypatch.setenv("ELSAI_SESSIONS_BUCKET", bucket)
        monkeypatch.setenv("ELSAI_STATE_MACHINE_ARN", machine_arn)
        monkeypatch.setenv("ELSAI_MODEL", "scripted")
        monkeypatch.setenv("ELSAI_AGENT_FACTORY", "example_agent:build_agent")
        aws_clients.clear()
        yield {
            "bucket": bucket,
            "agent": resolve(role_statements(template, "AgentFunctionRole"), values),
            "api": resolve(role_statements(template, "ApiFunctionRole"), values),
        }
        aws_clients.clear()


def _as(monkeypatch: pytest.MonkeyPatch, statements: list[dict[str, Any]]) -> None:
    """From now on every client in this process signs as a user holding only `statements`."""
    for name, value in user_with_policy(boto3.client("iam"), statements).items():
        monkeypatch.setenv(name, value)
    aws_clients.clear()


def _slice(session_id: str) -> dict[str, Any]:
    return {"action": "run_slice", "job_id": f"job-{session_id}", "session_id": session_id,
            "execution_id": f"arn:aws:states:{REGION}:{ACCOUNT}:execution:jobs:{session_id}",
            "agent_id": "agent", "prompt": "Process orders 1 and 2", "slice": 0}  # fmt: skip


def _api_event(fixture: str, path: str, body: Any = None) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / fixture).read_text())
    event["path"], event["requestContext"]["path"] = path, "/v1" + path
    if body is not None:
        event["body"], event["isBase64Encoded"] = json.dumps(body), False
    return event


def test_the_agent_role_is_enough_for_a_slice_and_its_park(
    account: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from elsai_lambdas import agent_handler

    _as(monkeypatch, account["agent"])
    session_id = f"iam-{uuid.uuid4().hex[:8]}"
    with enable_iam_authentication():
        result = agent_handler.handler(_slice(session_id), Context())
        parked = agent_handler.handler(
            {
                "action": "park",
                "job_id": f"job-{session_id}",
                "session_id": session_id,
                "task_token": "token-1",
                "interrupts": [],
            },
            Context(),  # fmt: skip
        )
    # Read back as the test's admin (the default session's "testing" keys), enforcement off.
    bookmark = boto3.client("s3").get_object(
        Bucket=account["bucket"], Key=keys.checkpoint_key(session_id, "agent")
    )
    assert result["status"] == "completed" and parked == {"parked": True}
    assert json.loads(bookmark["Body"].read())["execution_status"] == "completed"


def test_without_s3_put_object_the_slice_is_denied(
    account: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from elsai_lambdas import agent_handler

    reduced = without_action(account["agent"], "s3:PutObject")
    assert reduced != account["agent"]
    _as(monkeypatch, reduced)
    with enable_iam_authentication(), pytest.raises(Exception) as caught:
        agent_handler.handler(_slice(f"iam-{uuid.uuid4().hex[:8]}"), Context())
    chain, exc = [], caught.value
    while exc is not None:
        chain.append(f"{type(exc).__name__}: {exc}")
        exc = exc.__cause__ or exc.__context__
    assert any("AccessDenied" in link for link in chain), chain
    assert [
        k for k in boto3.client("s3").list_objects_v2(Bucket=account["bucket"]).get("Contents", [])
    ] == []


def test_the_api_role_can_start_a_job_and_read_its_status(
    account: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from elsai_lambdas import api_handler

    _as(monkeypatch, account["api"])
    with enable_iam_authentication():
        started = api_handler.handler(
            _api_event("post_jobs.json", "/jobs", {"prompt": "Process order 3"}), Context()
        )
        assert started["statusCode"] == 202, started
        job_id = json.loads(started["body"])["job_id"]
        status = api_handler.handler(_api_event("get_job.json", f"/jobs/{job_id}"), Context())
        # Not the agent: the API role may read the bucket but never write it.
        with pytest.raises(Exception, match="AccessDenied"):
            boto3.Session().client("s3").put_object(Bucket=account["bucket"], Key="x", Body=b"x")
    assert status["statusCode"] == 200, status
    assert json.loads(status["body"])["status"] in {"RUNNING", "SUCCEEDED"}
