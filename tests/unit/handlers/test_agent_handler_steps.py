"""The agent handler serves a step by looking its action up in the registry, and nothing else.

The real handler, in process, over moto S3 (the moto server of tests/conftest.py) with the
example agent: a slice is served end to end, an action no step serves runs nothing, and a
step the registry names (here one the test defines) is served without any code of its own in
the handler: its request validated, its function given the invocation's context, its result
checked against the registered result model.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from pydantic import BaseModel

from elsai.serverless.contract import JobStepRequest, ParkResult
from elsai.serverless.contract.steps import RUN_SLICE, Step, UnknownActionError
from elsai.serverless.step_context import StepContext
from tests.unit.handlers.jobs_api.helpers import FakeContext

ROOT = Path(__file__).resolve().parents[3]
HERE = "tests.unit.handlers.test_agent_handler_steps"
# Read when the handler module is imported (its module-level Tracer and Metrics).
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "elsai")
os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "elsai")


@pytest.fixture
def handler(s3_bucket: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The agent handler with the example agent, over a fresh bucket."""
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "agents"))
    monkeypatch.setenv("ELSAI_SESSIONS_BUCKET", s3_bucket)
    monkeypatch.setenv("ELSAI_AGENT_FACTORY", "example_agent:build_agent")
    monkeypatch.setenv("ELSAI_MODEL", "scripted")
    monkeypatch.delenv("ELSAI_TENANT_ROLE_ARN", raising=False)
    from elsai_lambdas import agent_handler

    yield agent_handler


def _stored(bucket: str) -> list[str]:
    listed = boto3.client("s3").list_objects_v2(Bucket=bucket)
    return sorted(o["Key"] for o in listed.get("Contents", []))


def _event(action: str, **fields: Any) -> dict[str, Any]:
    ids = {"job_id": "job-1", "execution_id": "exec-1", "session_id": "s1", "agent_id": "agent"}
    return {"action": action, **ids, "prompt": "Process order 7", **fields}


def test_a_slice_is_served_through_the_registry(handler: Any, s3_bucket: str) -> None:
    context = FakeContext(function_name="elsai-agent", remaining_ms=900_000)
    result = handler.handler(_event(RUN_SLICE), context)
    assert (result["status"], result["slice"], result["model_calls"]) == ("completed", 0, 2)
    assert "session_s1/agents/agent_agent/checkpoint.json" in _stored(s3_bucket)


def test_an_action_no_step_serves_runs_nothing(handler: Any, s3_bucket: str) -> None:
    # the same event as a slice's, but an action nothing serves: not a slice by default
    with pytest.raises(UnknownActionError, match=r"'slice_please'.*'run_slice'"):
        handler.handler(_event("slice_please"), FakeContext(function_name="elsai-agent"))
    with pytest.raises(UnknownActionError):
        handler.handler(_event(["run_slice"]), FakeContext(function_name="elsai-agent"))  # type: ignore[arg-type]
    assert _stored(s3_bucket) == []


# -- a step the handler has no code for -------------------------------------------------------


class Seen(BaseModel):
    """What the echo step saw of its request and context."""

    job_id: str
    invocation_id: str
    remaining_ms: int
    session_prefix: str


def echo(request: JobStepRequest, context: StepContext) -> Seen:
    """A step function: reports what it was given."""
    manager: Any = context.session_manager(request.session_id, request.job_id)
    context.log("echo finished", job_id=request.job_id)
    return Seen(
        job_id=request.job_id,
        invocation_id=context.invocation_id,
        remaining_ms=context.remaining_ms(),
        session_prefix=manager.prefix,
    )


def wrong_result(request: JobStepRequest, context: StepContext) -> ParkResult:
    """A step function returning another model than its entry names."""
    return ParkResult()


ECHO = Step("echo", f"{JobStepRequest.__module__}:JobStepRequest", f"{HERE}:Seen", f"{HERE}:echo",
            "schedule")  # fmt: skip


def test_a_registered_step_is_served_without_handler_code(
    handler: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(handler, "step", lambda action: {"echo": ECHO}[action])
    context = FakeContext(function_name="elsai-agent", remaining_ms=12_345)
    out = handler.handler(_event("echo"), context)
    assert out == {"job_id": "job-1", "invocation_id": context.aws_request_id,
                   "remaining_ms": 12_345, "session_prefix": ""}  # fmt: skip
    with pytest.raises(Exception, match="job_id"):  # the request model validates the event
        handler.handler({"action": "echo", "session_id": "s1"}, context)
    wrong = Step("echo", ECHO.request, ECHO.result, f"{HERE}:wrong_result", "schedule")
    monkeypatch.setattr(handler, "step", lambda action: wrong)
    with pytest.raises(TypeError, match="returned a ParkResult, not a Seen"):
        handler.handler(_event("echo"), context)


def test_the_handler_module_names_no_action_but_the_default() -> None:
    source = (ROOT / "lambdas" / "agent_handler.py").read_text()
    for action in ("park", "plan", "node_slice", "fold", "park_nodes"):
        assert f'"{action}"' not in source
    assert "PARK" not in source and "PLAN" not in source and "FOLD" not in source
