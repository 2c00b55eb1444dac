"""LocalStack's Step Functions interpreter (localstack-core 4.7.0), driven in-process.

A second engine next to moto's (which is a port of an older LocalStack): the synthesized
definition runs in LocalStack's own provider and interpreter. Only the edges are answered
in-process: a Lambda invocation at the interpreter's invoke call (a scripted agent), and the
``states:startExecution`` integration by the same provider (the continuation), instead of
HTTP calls to a LocalStack server that is not running.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError
from localstack.aws.api import RequestContext
from localstack.services.stepfunctions.asl.component.state.state_execution.state_task import (
    lambda_eval_utils,
)
from localstack.services.stepfunctions.asl.component.state.state_execution.state_task.service import (  # noqa: E501
    state_task_service_sfn,
)
from localstack.services.stepfunctions.backend.execution import Execution
from localstack.services.stepfunctions.backend.store import sfn_stores
from localstack.services.stepfunctions.provider import StepFunctionsProvider

ACCOUNT = "000000000000"
REGION = "us-east-1"
MACHINE_NAME = "ElsaiStack-jobs"  # the name the definition's continuation targets

Script = Callable[[dict[str, Any]], dict[str, Any]]


class FunctionError(Exception):
    """Raised by a script: the invocation returns a function error named ``error_type``."""

    def __init__(self, error_type: str, message: str = "boom") -> None:
        super().__init__(message)
        self.error_type = error_type


def throttled() -> ClientError:
    """What Lambda's Invoke raises when reserved concurrency is used up (HTTP 429)."""
    return ClientError(
        {
            "Error": {"Code": "TooManyRequestsException", "Message": "Rate Exceeded."},
            "ResponseMetadata": {"HTTPStatusCode": 429, "RequestId": "r-1"},
        },
        "Invoke",
    )


def fast(definition: dict[str, Any], *, task_timeout: int | None = None) -> dict[str, Any]:
    """Same definition, shorter waits: only timing knobs change."""
    for state in definition["States"].values():
        for retrier in state.get("Retry", []):
            if "IntervalSeconds" in retrier:
                retrier.update(IntervalSeconds=1, BackoffRate=1.0, MaxDelaySeconds=1)
        if task_timeout is not None and state.get("Resource") == "arn:aws:states:::lambda:invoke":
            state["TimeoutSeconds"] = task_timeout
    return definition


class _InProcessSfn:
    """The provider behind the ``states:startExecution`` integration's client."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def start_execution(self, **params: Any) -> dict[str, Any]:
        p = {k[0].lower() + k[1:]: v for k, v in params.items()}
        out = self._engine.provider.start_execution(
            self._engine.ctx, p["stateMachineArn"], name=p.get("name"), input=p.get("input")
        )
        return {"ExecutionArn": out["executionArn"], "StartDate": out["startDate"]}


class Engine:
    """One LocalStack provider with the jobs machine; the agent Lambda is ``script``."""

    def __init__(self, definition: dict[str, Any]) -> None:
        sfn_stores.reset()  # one machine per test: the store is process-wide
        self.ctx = RequestContext(None)
        self.ctx.account_id, self.ctx.region = ACCOUNT, REGION
        self.provider = StepFunctionsProvider()
        self.calls: list[dict[str, Any]] = []
        self.parked: list[dict[str, Any]] = []
        self.script: Script = lambda event: {"status": "completed"}
        self._lock = threading.Lock()
        machine = self.provider.create_state_machine(
            self.ctx,
            {"name": MACHINE_NAME, "definition": json.dumps(definition),
             "roleArn": f"arn:aws:iam::{ACCOUNT}:role/sfn"},
        )  # fmt: skip
        self.machine_arn = machine["stateMachineArn"]

    # -- the edges ---------------------------------------------------------------------------

    def invoke(
        self, parameters: dict[str, Any], region: str, state_credentials: Any
    ) -> dict[str, Any]:
        event = json.loads(parameters["Payload"])
        with self._lock:
            self.calls.append(event)
        if event["action"] == "park":
            self.parked.append(event)
            return {"StatusCode": 200, "Payload": {"parked": True}}
        try:
            result = self.script(event)
        except FunctionError as exc:
            payload = {"errorType": exc.error_type, "errorMessage": str(exc)}
            return {"StatusCode": 200, "FunctionError": "Unhandled", "Payload": payload}
        return {"StatusCode": 200, "Payload": {"model_calls": 0, **result}}

    def install(self, monkeypatch: Any) -> None:
        monkeypatch.setattr(lambda_eval_utils, "_invoke_lambda_function", self.invoke)
        monkeypatch.setattr(
            state_task_service_sfn, "boto_client_for", lambda **kw: _InProcessSfn(self)
        )
        # EventBridge status events would go to a LocalStack gateway that is not running.
        monkeypatch.setattr(Execution, "publish_execution_status_change_event", lambda self: None)

    # -- driving -----------------------------------------------------------------------------

    def start(self, name: str, **job_input: Any) -> str:
        payload = {"session_id": "s1", "agent_id": "a1", "prompt": "hi", **job_input}
        out = self.provider.start_execution(
            self.ctx, self.machine_arn, name=name, input=json.dumps(payload)
        )
        return str(out["executionArn"])

    def describe(self, arn: str) -> dict[str, Any]:
        return dict(self.provider.describe_execution(self.ctx, arn))

    def wait(
        self, arn: str, *, until: Callable[[], bool] | None = None, seconds: float = 60
    ) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if until is not None and until():
                return {}
            desc = self.describe(arn)
            if desc["status"] != "RUNNING":
                return desc
            time.sleep(0.05)
        raise AssertionError(f"{arn} still running after {seconds} s")

    def answer(self, task_token: str, responses: list[Any]) -> None:
        self.provider.send_task_success(
            self.ctx, task_token, json.dumps({"interrupt_responses": responses})
        )

    def wait_named(self, name: str, seconds: float = 60) -> dict[str, Any]:
        """Wait for execution ``name`` (e.g. a continuation's) to exist and finish."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                return self.wait(self.execution_arn(name), seconds=seconds)
            except Exception as exc:  # ExecutionDoesNotExist until the continuation started it
                if "ExecutionDoesNotExist" not in type(exc).__name__:
                    raise
            time.sleep(0.05)
        raise AssertionError(f"execution {name} never appeared")

    def execution_arn(self, name: str) -> str:
        return self.machine_arn.replace(":stateMachine:", ":execution:") + ":" + name

    def slices(self) -> list[dict[str, Any]]:
        return [c for c in self.calls if c["action"] == "run_slice"]
