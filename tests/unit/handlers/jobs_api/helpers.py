"""Shared pieces of the API handler tests: SAM-generated events, a Lambda context, replies."""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EVENTS = Path(__file__).with_name("events")
REGION = "us-east-1"
ACCOUNT = "123456789012"
BUCKET = "elsai-sessions-api-tests"
MACHINE_NAME = "ElsaiJobs"
#: The SigV4 principal API Gateway reports for requests `make_event` builds (IAM auth).
CALLER_ARN = f"arn:aws:sts::{ACCOUNT}:assumed-role/app-users/tester"
AGENT_ARN = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:elsai-agent"

# What the example agent's tools would ask (shape of elsai.interrupt.Interrupt.to_dict()).
INTERRUPTS = [
    {
        "id": "interrupt-approve",
        "name": "approve_refund",
        "reason": {"amount": 40},
        "tool_use_id": "t1",
    },
    {"id": "interrupt-address", "name": "confirm_address", "reason": None, "tool_use_id": "t2"},
]

_NOT_SET = object()


def load_event(name: str) -> dict[str, Any]:
    """A fresh copy of a committed `sam local generate-event` fixture."""
    event: dict[str, Any] = json.loads((EVENTS / name).read_text())
    return copy.deepcopy(event)


def set_header(event: dict[str, Any], name: str, value: str | list[str]) -> None:
    """Set a header the way API Gateway does: in `headers` and `multiValueHeaders`."""
    values = value if isinstance(value, list) else [value]
    event.setdefault("headers", {})[name] = values[-1]
    event.setdefault("multiValueHeaders", {})[name] = values


def make_event(
    fixture: str,
    *,
    method: str | None = None,
    path: str | None = None,
    body: Any = _NOT_SET,
    raw_body: str | None = None,
    headers: dict[str, str | list[str]] | None = None,
    caller: str | None = CALLER_ARN,
) -> dict[str, Any]:
    """A SAM fixture with the method, path, body, headers or caller a test needs.

    `caller` is the identity's ``userArn`` (SAM's fixtures have none; API Gateway with IAM
    auth always sets it). Only the API's tenant isolation (`jobs_api.owner`) reads it.

    `body` is JSON-encoded; `raw_body` goes in verbatim. Either clears the fixture's base64
    flag (API Gateway only base64-encodes binary media types, and this API declares none).
    """
    event = load_event(fixture)
    event["requestContext"]["identity"]["userArn"] = caller
    if method is not None:
        event["httpMethod"] = method
        event["requestContext"]["httpMethod"] = method
    if path is not None:
        event["path"] = path
        event["requestContext"]["path"] = "/v1" + path
    if body is not _NOT_SET or raw_body is not None:
        event["body"] = raw_body if raw_body is not None else json.dumps(body)
        event["isBase64Encoded"] = False
    for name, value in (headers or {}).items():
        set_header(event, name, value)
    return event


@dataclass
class FakeContext:
    """The LambdaContext attributes Powertools reads."""

    function_name: str = "elsai-api"
    function_version: str = "$LATEST"
    invoked_function_arn: str = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:elsai-api"
    memory_limit_in_mb: int = 512
    aws_request_id: str = "00000000-0000-4000-8000-000000000000"
    log_group_name: str = "/aws/lambda/elsai-api"
    log_stream_name: str = "2026/01/01/[$LATEST]0"
    remaining_ms: int = 29_000

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


@dataclass
class Reply:
    """A decoded API Gateway proxy response."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Reply:
        headers = {k.lower(): v for k, v in (raw.get("headers") or {}).items()}
        for k, v in (raw.get("multiValueHeaders") or {}).items():
            headers.setdefault(k.lower(), v[-1])
        assert headers.get("content-type", "").startswith("application/json"), raw
        assert not raw.get("isBase64Encoded"), raw
        return cls(status=int(raw["statusCode"]), body=json.loads(raw["body"]), headers=headers)

    def error_message(self) -> str:
        assert isinstance(self.body, dict) and isinstance(self.body.get("error"), str), self.body
        return str(self.body["error"])


def wait_until(
    predicate: Callable[[], Any], *, timeout: float = 20.0, what: str = "condition"
) -> Any:
    """Poll `predicate` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Api:
    """Calls the real handler with API Gateway proxy events; moto clients for assertions."""

    def __init__(self, handler_module: Any, sfn: Any, s3: Any, machine_arn: str) -> None:
        self.module = handler_module
        self.sfn = sfn
        self.s3 = s3
        self.machine_arn = machine_arn

    def call(self, event: dict[str, Any]) -> Reply:
        raw = self.module.handler(event, FakeContext())
        return Reply.of(raw)

    def post_job(self, body: Any, headers: dict[str, Any] | None = None) -> Reply:
        return self.call(make_event("post_jobs.json", body=body, headers=headers))

    def get_job(self, job_id: str) -> Reply:
        return self.call(make_event("get_job.json", path=f"/jobs/{job_id}"))

    def answer(self, job_id: str, body: Any) -> Reply:
        return self.call(
            make_event("post_job_responses.json", path=f"/jobs/{job_id}/responses", body=body)
        )

    def get_session(self, session_id: str) -> Reply:
        return self.call(make_event("get_session.json", path=f"/sessions/{session_id}"))

    def execution_arn(self, job_id: str) -> str:
        return f"arn:aws:states:{REGION}:{ACCOUNT}:execution:{MACHINE_NAME}:{job_id}"

    def describe(self, job_id: str) -> dict[str, Any]:
        return dict(self.sfn.describe_execution(executionArn=self.execution_arn(job_id)))

    def executions(self) -> list[dict[str, Any]]:
        return list(self.sfn.list_executions(stateMachineArn=self.machine_arn)["executions"])

    def history_types(self, job_id: str) -> list[str]:
        events = self.sfn.get_execution_history(executionArn=self.execution_arn(job_id))["events"]
        return [e["type"] for e in sorted(events, key=lambda e: e["id"])]
