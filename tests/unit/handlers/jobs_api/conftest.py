"""Fixtures: the real api handler over moto S3 + Step Functions.

`api` is a plain moto account (executions stay RUNNING until stopped). `engine_api` runs
the ASL with moto's engine: the prompt picks the ending ("fail" → FAILED, "ask" → parks a
task token through the *real* agent handler and waits for POST /responses, anything
else → SUCCEEDED), so GET and POST see the states a deployed job goes through.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from tests.unit.handlers.jobs_api.helpers import (
    ACCOUNT,
    AGENT_ARN,
    BUCKET,
    INTERRUPTS,
    MACHINE_NAME,
    REGION,
    Api,
    FakeContext,
)

# Read when the handler modules are imported (module-level Tracer).
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")

PASS_MACHINE = {"StartAt": "Start", "States": {"Start": {"Type": "Pass", "End": True}}}

ENGINE_MACHINE: dict[str, Any] = {
    "Comment": "Test double of the jobs machine: the prompt picks the ending.",
    "StartAt": "Route",
    "States": {
        "Route": {
            "Type": "Choice",
            "Choices": [
                {"Variable": "$.prompt", "StringEquals": "fail", "Next": "SliceBudgetExhausted"},
                {"Variable": "$.prompt", "StringEquals": "ask", "Next": "WaitForResponses"},
            ],
            "Default": "Completed",
        },
        "Completed": {
            "Type": "Pass",
            "Parameters": {"status": "completed", "stop_reason": "end_turn", "text": "All done."},
            "End": True,
        },
        "SliceBudgetExhausted": {
            "Type": "Fail",
            "Error": "SliceBudgetExhausted",
            "Cause": "the job used all of its slices",
        },
        "WaitForResponses": {
            "Type": "Task",
            "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
            "Parameters": {
                "FunctionName": AGENT_ARN,
                "Payload": {
                    "action": "park",
                    "task_token.$": "$$.Task.Token",
                    "job_id.$": "$$.Execution.Name",
                    "session_id.$": "$.session_id",
                    "agent_id.$": "$.agent_id",
                    "interrupts": INTERRUPTS,
                },
            },
            "TimeoutSeconds": 120,
            "ResultPath": "$.answer",
            "Next": "ResumeSlice",
        },
        "ResumeSlice": {"Type": "Wait", "Seconds": 2, "Next": "Answered"},
        "Answered": {
            "Type": "Pass",
            "Parameters": {
                "status": "completed",
                "interrupt_responses.$": "$.answer.interrupt_responses",
            },
            "End": True,
        },
    },
}


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_SERVICE_NAME": "elsai",
        "POWERTOOLS_METRICS_NAMESPACE": "elsai",
        "ELSAI_SESSIONS_BUCKET": BUCKET,
        "ELSAI_STATE_MACHINE_ARN": f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{MACHINE_NAME}",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)


def _account(definition: dict[str, Any]) -> Api:
    from elsai_lambdas import api_handler

    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket=BUCKET)
    sfn = boto3.client("stepfunctions", region_name=REGION)
    machine = sfn.create_state_machine(
        name=MACHINE_NAME,
        definition=json.dumps(definition),
        roleArn=f"arn:aws:iam::{ACCOUNT}:role/elsai-jobs",
        type="STANDARD",
    )
    return Api(api_handler, sfn, s3, machine["stateMachineArn"])


@pytest.fixture
def api(aws_env: None) -> Iterator[Api]:
    """moto without the ASL engine: executions are RUNNING until stopped.

    Said explicitly: moto's config is process-global, and a local runtime another suite still
    holds open (a session fixture) has switched the engine on.
    """
    with mock_aws(config={"stepfunctions": {"execute_state_machine": False}}):
        yield _account(PASS_MACHINE)


@pytest.fixture
def engine_api(aws_env: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    """moto's ASL engine; the park task calls the real agent handler in process."""
    from moto.awslambda_simple.models import LambdaSimpleBackend

    from elsai_lambdas import agent_handler

    def invoke(_self: Any, function_name: str, qualifier: Any, body: Any, headers: Any,
               response_headers: dict[str, str]) -> bytes:  # fmt: skip
        assert function_name.endswith("elsai-agent"), function_name
        return json.dumps(
            agent_handler.handler(json.loads(body), FakeContext(function_name="elsai-agent"))
        ).encode()

    monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke)
    config: Any = {
        "lambda": {"use_docker": False},
        "stepfunctions": {"execute_state_machine": True},
    }
    with mock_aws(config=config):
        account = _account(ENGINE_MACHINE)
        try:
            yield account
        finally:
            for execution in account.executions():
                if execution["status"] == "RUNNING":
                    account.sfn.stop_execution(executionArn=execution["executionArn"])
