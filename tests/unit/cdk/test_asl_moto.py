"""The synthesized ASL really runs: moto's Step Functions engine executes it.

The agent Lambda is replaced by small scripted stubs (the real handlers are tested
elsewhere); these tests pin the state machine's own behaviour: routing, data flow,
retries, the non-retried conflict error, the slice budget and the task-token wait.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.unit.cdk.asl_harness import FunctionError, Harness, running


@pytest.fixture
def harness(template_dict: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    with running(template_dict, monkeypatch) as h:
        yield h


@pytest.fixture
def custom_harness(
    custom_template_dict: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Harness]:
    """maxSlices=3, interruptWaitSeconds=2 (see conftest.CUSTOM_CONTEXT)."""
    with running(custom_template_dict, monkeypatch) as h:
        yield h


def test_continue_then_complete_passes_ids_and_nulls(harness: Harness) -> None:
    statuses = iter(["continue", "continue", "completed"])
    harness.script = lambda e: {"status": next(statuses), "text": "done", "cycles": 3}
    desc = harness.wait(harness.start())
    assert desc["status"] == "SUCCEEDED"
    assert json.loads(desc["output"]) == {
        "status": "completed",
        "text": "done",
        "cycles": 3,
        "model_calls": 0,
    }
    slices = harness.run_slices()
    assert [c["slice"] for c in slices] == [0, 1, 2]
    assert slices[0]["prompt"] == "hi" and slices[0]["interrupt_responses"] is None
    assert all(c["prompt"] is None and c["interrupt_responses"] is None for c in slices[1:])
    job_id = desc["executionArn"].rsplit(":", 1)[1]
    for c in slices:
        assert (c["job_id"], c["session_id"], c["agent_id"]) == (job_id, "s1", "a1")
        assert c["execution_id"] == desc["executionArn"]


def test_interrupt_waits_for_token_and_resumes_with_responses(harness: Harness) -> None:
    statuses = iter(["interrupted", "completed"])
    harness.script = lambda e: {"status": next(statuses), "interrupts": [{"id": "i1"}]}
    arn = harness.start()
    harness.wait(arn, until=lambda: bool(harness.parked))
    park = harness.parked[0]
    assert park["interrupts"] == [{"id": "i1"}] and park["task_token"]
    assert park["job_id"] == arn.rsplit(":", 1)[1]
    harness.sfn.send_task_success(
        taskToken=park["task_token"], output=json.dumps({"interrupt_responses": [{"ok": True}]})
    )
    desc = harness.wait(arn)
    assert desc["status"] == "SUCCEEDED", desc
    second = harness.run_slices()[1]
    assert second["interrupt_responses"] == [{"ok": True}]
    assert second["prompt"] is None and second["slice"] == 1


def test_transient_failures_are_retried_then_resume(harness: Harness) -> None:
    failures = ["Lambda.Unknown", "Sandbox.Timedout"]

    def script(event: dict[str, Any]) -> dict[str, Any]:
        if failures:
            raise FunctionError(failures.pop(0))
        return {"status": "completed", "resumed_from_checkpoint": True}

    harness.script = script
    desc = harness.wait(harness.start())
    assert desc["status"] == "SUCCEEDED"
    slices = harness.run_slices()
    assert len(slices) == 3 and {c["slice"] for c in slices} == {0}  # same slice retried


def test_retries_are_bounded_and_fail_with_the_real_cause(harness: Harness) -> None:
    def script(event: dict[str, Any]) -> dict[str, Any]:
        raise FunctionError("ModelThrottled", "still throttled")

    harness.script = script
    desc = harness.wait(harness.start())
    assert desc["status"] == "FAILED"
    assert desc["error"] == "ModelThrottled"
    assert "still throttled" in desc["cause"]
    assert len(harness.run_slices()) == 1 + 5  # first try + MaxAttempts


def test_session_conflict_is_not_retried(harness: Harness) -> None:
    def script(event: dict[str, Any]) -> dict[str, Any]:
        raise FunctionError("SessionConflictError", "another writer holds session s1")

    harness.script = script
    desc = harness.wait(harness.start())
    assert desc["status"] == "FAILED"
    assert desc["error"] == "SessionConflictError"
    assert "another writer" in desc["cause"]
    assert len(harness.run_slices()) == 1


def test_a_misconfigured_agent_factory_is_not_retried(harness: Harness) -> None:
    """A configuration error fails the job once, with its message."""

    def script(event: dict[str, Any]) -> dict[str, Any]:
        raise FunctionError("AgentFactoryError", "cannot import agent factory module 'nope'")

    harness.script = script
    desc = harness.wait(harness.start())
    assert desc["status"] == "FAILED" and desc["error"] == "AgentFactoryError"
    assert "cannot import agent factory module 'nope'" in desc["cause"]
    assert len(harness.run_slices()) == 1


def test_an_agent_in_use_is_retried_then_resumes(harness: Harness) -> None:
    """Another live owner's lease is transient: the slice is retried."""
    calls: list[int] = []

    def script(event: dict[str, Any]) -> dict[str, Any]:
        calls.append(event["slice"])
        if len(calls) == 1:
            raise FunctionError("AgentInUseError", "in use by another process until ...")
        return {"status": "completed", "stop_reason": "end_turn", "text": "done", "slice": 0}

    harness.script = script
    desc = harness.wait(harness.start())
    assert desc["status"] == "SUCCEEDED"
    assert calls == [0, 0]


@pytest.mark.parametrize("error", ["ModelAccessDeniedError", "InterruptPayloadTooLargeError"])
def test_errors_a_person_must_fix_are_not_retried(harness: Harness, error: str) -> None:
    def script(event: dict[str, Any]) -> dict[str, Any]:
        raise FunctionError(error, "an admin must enable model access")

    harness.script = script
    desc = harness.wait(harness.start())
    assert (desc["status"], desc["error"]) == ("FAILED", error)
    assert "enable model access" in desc["cause"]
    assert len(harness.run_slices()) == 1


def test_throttled_slices_wait_on_their_own_retry(harness: Harness) -> None:
    failures = ["Lambda.TooManyRequestsException"] * 6  # more than the general MaxAttempts 5

    def script(event: dict[str, Any]) -> dict[str, Any]:
        if failures:
            raise FunctionError(failures.pop())
        return {"status": "completed"}

    harness.script = script
    desc = harness.wait(harness.start())
    assert desc["status"] == "SUCCEEDED"
    assert len(harness.run_slices()) == 7


def test_park_step_crash_is_retried(harness: Harness) -> None:
    statuses = iter(["interrupted", "completed"])
    harness.script = lambda e: {"status": next(statuses), "interrupts": [{"id": "i1"}]}
    crashes = ["Runtime.ExitError", "Sandbox.Timedout"]
    original = harness.invoke

    def invoke(body: Any, response_headers: dict[str, str]) -> bytes:
        if json.loads(body)["action"] == "park" and crashes:
            response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps({"errorType": crashes.pop(0), "errorMessage": "crash"}).encode()
        return original(body, response_headers)

    harness.invoke = invoke  # type: ignore[method-assign]
    arn = harness.start()
    harness.wait(arn, until=lambda: bool(harness.parked))
    harness.sfn.send_task_success(
        taskToken=harness.parked[-1]["task_token"], output=json.dumps({"interrupt_responses": []})
    )
    assert harness.wait(arn)["status"] == "SUCCEEDED"
    assert not crashes


def test_unknown_status_fails_clearly(harness: Harness) -> None:
    harness.script = lambda e: {"status": "weird"}
    desc = harness.wait(harness.start())
    assert (desc["status"], desc["error"]) == ("FAILED", "UnknownSliceStatus")


def test_slice_budget_ends_the_job(custom_harness: Harness) -> None:
    custom_harness.script = lambda e: {"status": "continue"}
    desc = custom_harness.wait(custom_harness.start())
    assert (desc["status"], desc["error"]) == ("FAILED", "SliceBudgetExhausted")
    assert [c["slice"] for c in custom_harness.run_slices()] == [0, 1, 2]


def test_model_call_budget_ends_the_job_with_a_clear_cause(custom_harness: Harness) -> None:
    # Each slice reports the model calls it made; the machine sums them between slices.
    custom_harness.script = lambda e: {"status": "continue", "model_calls": 3}
    desc = custom_harness.wait(custom_harness.start())
    assert (desc["status"], desc["error"]) == ("FAILED", "ModelCallBudgetExhausted")
    assert "4 model calls" in desc["cause"] and "maxModelCalls" in desc["cause"]
    assert [c["slice"] for c in custom_harness.run_slices()] == [0, 1]  # 3, then 6 >= 4


def test_unanswered_interrupt_times_out_into_failure(custom_harness: Harness) -> None:
    custom_harness.script = lambda e: {"status": "interrupted", "interrupts": []}
    desc = custom_harness.wait(custom_harness.start())
    assert (desc["status"], desc["error"]) == ("FAILED", "InterruptWaitTimedOut")
    assert len(custom_harness.parked) == 1  # a timeout is not retried


def test_send_task_failure_from_the_api_fails_the_job(harness: Harness) -> None:
    harness.script = lambda e: {"status": "interrupted", "interrupts": [{"id": "i1"}]}
    arn = harness.start()
    harness.wait(arn, until=lambda: bool(harness.parked))
    harness.sfn.send_task_failure(
        taskToken=harness.parked[0]["task_token"], error="InterruptRejected", cause="user said no"
    )
    desc = harness.wait(arn)
    # moto drops SendTaskFailure's cause; JobFailed must still fail cleanly on a null one.
    assert (desc["status"], desc["error"]) == ("FAILED", "InterruptRejected")
    assert desc.get("cause") in ("user said no", "null")
    assert len(harness.parked) == 1
