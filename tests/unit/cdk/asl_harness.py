"""A moto account running the synthesized state machine, with a scripted agent Lambda.

Shared by the ASL tests (tests/unit/cdk/test_asl_moto.py, test_handoff.py).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.awslambda_simple.models import LambdaSimpleBackend

from elsai.local.definition import state_machine_definition
from elsai.local.sfn_start_execution import botocore_names_for_start_execution

REGION = "us-east-1"
ACCOUNT = "123456789012"
AGENT_ARN = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:elsai-agent"

Stub = Callable[[dict[str, Any]], dict[str, Any]]


class FunctionError(Exception):
    """Raised by a stub: becomes a Lambda function error named ``error_type``."""

    def __init__(self, error_type: str, message: str = "boom") -> None:
        super().__init__(message)
        self.error_type = error_type


class Harness:
    """moto state machine from the synthesized template, with a scripted agent Lambda."""

    def __init__(self, sfn: Any, machine_arn: str) -> None:
        self.sfn = sfn
        self.machine_arn = machine_arn
        self.calls: list[dict[str, Any]] = []
        self.script: Stub = lambda event: {"status": "completed"}
        self.parked: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def invoke(self, body: Any, response_headers: dict[str, str]) -> bytes:
        event = json.loads(body)
        with self.lock:
            self.calls.append(event)
        if event["action"] == "park":
            self.parked.append(event)
            return b"{}"
        try:
            result = self.script(event)
        except FunctionError as exc:
            response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps({"errorType": exc.error_type, "errorMessage": str(exc)}).encode()
        # The handler contract (SliceResult) always reports the slice's model calls.
        return json.dumps({"model_calls": 0, **result}).encode()

    def start(self, **job_input: Any) -> str:
        payload = {"session_id": "s1", "agent_id": "a1", "prompt": "hi", **job_input}
        return str(self.sfn.start_execution(
            stateMachineArn=self.machine_arn, name=f"job-{len(self.calls)}-{time.time_ns()}",
            input=json.dumps(payload),
        )["executionArn"])  # fmt: skip

    def wait(
        self, execution_arn: str, *, until: Callable[[], bool] | None = None
    ) -> dict[str, Any]:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if until is not None and until():
                return {}
            desc = self.sfn.describe_execution(executionArn=execution_arn)
            if desc["status"] != "RUNNING":
                return dict(desc)
            time.sleep(0.05)
        raise AssertionError("execution did not finish in 30 s")

    def run_slices(self) -> list[dict[str, Any]]:
        return [c for c in self.calls if c["action"] == "run_slice"]


def _fast_retries(definition: dict[str, Any]) -> dict[str, Any]:
    """Same Retry shape, shorter waits: only the timing knobs change."""
    for state in definition["States"].values():
        for retrier in state.get("Retry", []):
            if "IntervalSeconds" in retrier:
                retrier["IntervalSeconds"] = 1
                retrier["BackoffRate"] = 1.0
                retrier["MaxDelaySeconds"] = 1
    return definition


@contextlib.contextmanager
def running(template: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    """A moto account whose state machine is the template's, agent Lambda scripted."""
    definition = _fast_retries(state_machine_definition(template, {"AgentFunction": AGENT_ARN}))
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    config = {"lambda": {"use_docker": False}, "stepfunctions": {"execute_state_machine": True}}
    with mock_aws(config=config):  # type: ignore[arg-type]
        sfn = boto3.client("stepfunctions", region_name=REGION)
        machine = sfn.create_state_machine(
            name="ElsaiStack-jobs", definition=json.dumps(definition),
            roleArn=f"arn:aws:iam::{ACCOUNT}:role/sfn", type="STANDARD",
        )  # fmt: skip
        h = Harness(sfn, machine["stateMachineArn"])

        def invoke(_self: Any, function_name: str, qualifier: Any, body: Any, headers: Any,
                   response_headers: dict[str, str]) -> bytes:  # fmt: skip
            return h.invoke(body, response_headers)

        monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke)
        with botocore_names_for_start_execution():  # the local runtime's fix, as it runs it
            yield h
