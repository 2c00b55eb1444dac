"""The synthesized definition walked through LocalStack's interpreter, path by path.

Same expectations as the moto tests (tests/unit/cdk/test_asl_moto.py), on an engine of
another lineage: success, the continue loop, each retried Lambda error, the non-retried
conflict, interrupt park -> answer -> resume, both budgets, task and wait timeouts, and the
continuation in a new execution.
"""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import pytest

from tests.system.conformance.engine import Engine, FunctionError, throttled

_names = itertools.count()


def _name() -> str:
    return f"job-{next(_names)}-{time.time_ns()}"


def test_success_returns_the_final_slice(default: Engine) -> None:
    default.script = lambda e: {"status": "completed", "text": "done"}
    desc = default.wait(default.start(_name()))
    assert desc["status"] == "SUCCEEDED"
    assert json.loads(desc["output"]) == {"status": "completed", "text": "done", "model_calls": 0}


def test_continue_loop_carries_ids_and_counts_slices(default: Engine) -> None:
    statuses = iter(["continue", "continue", "completed"])
    default.script = lambda e: {"status": next(statuses)}
    name = _name()
    assert default.wait(default.start(name))["status"] == "SUCCEEDED"
    slices = default.slices()
    assert [c["slice"] for c in slices] == [0, 1, 2]
    assert slices[0]["prompt"] == "hi" and all(c["prompt"] is None for c in slices[1:])
    assert {(c["job_id"], c["session_id"], c["agent_id"]) for c in slices} == {(name, "s1", "a1")}


@pytest.mark.parametrize("error", ["Sandbox.Timedout", "Lambda.Unknown", "Runtime.ExitError"])
def test_crashes_are_retried_as_the_same_slice(default: Engine, error: str) -> None:
    failures = [error, error]

    def script(event: dict[str, Any]) -> dict[str, Any]:
        if failures:
            raise FunctionError(failures.pop())
        return {"status": "completed"}

    default.script = script
    assert default.wait(default.start(_name()))["status"] == "SUCCEEDED"
    assert [c["slice"] for c in default.slices()] == [0, 0, 0]


def test_throttling_is_retried_longer_than_other_errors(default: Engine) -> None:
    failures = 6  # more than the ordinary retrier's MaxAttempts (5)

    def script(event: dict[str, Any]) -> dict[str, Any]:
        nonlocal failures
        if failures:
            failures -= 1
            raise throttled()
        return {"status": "completed"}

    default.script = script
    assert default.wait(default.start(_name()))["status"] == "SUCCEEDED"
    assert len(default.slices()) == 7


@pytest.mark.parametrize("error", ["SessionConflictError", "ModelAccessDeniedError"])
def test_errors_retries_cannot_fix_fail_at_once(default: Engine, error: str) -> None:
    def script(event: dict[str, Any]) -> dict[str, Any]:
        raise FunctionError(error, "another writer holds session s1")

    default.script = script
    desc = default.wait(default.start(_name()))
    assert (desc["status"], desc["error"]) == ("FAILED", error)
    assert "another writer" in desc["cause"]
    assert len(default.slices()) == 1


def test_interrupt_parks_then_the_answer_resumes(default: Engine) -> None:
    statuses = iter(["interrupted", "completed"])
    default.script = lambda e: {"status": next(statuses), "interrupts": [{"id": "i1"}]}
    arn = default.start(_name())
    default.wait(arn, until=lambda: bool(default.parked))
    park = default.parked[0]
    assert park["interrupts"] == [{"id": "i1"}] and park["task_token"]
    default.answer(park["task_token"], [{"interruptResponse": "yes"}])
    assert default.wait(arn)["status"] == "SUCCEEDED"
    second = default.slices()[1]
    assert second["interrupt_responses"] == [{"interruptResponse": "yes"}]
    assert second["slice"] == 1 and second["prompt"] is None


def test_slice_budget_ends_the_job(small: Engine) -> None:
    small.script = lambda e: {"status": "continue"}
    name = _name()
    small.start(name)
    desc = small.wait_named(f"{name}-c2")  # 5 slices, 2 per execution: the third runs out
    assert (desc["status"], desc["error"]) == ("FAILED", "SliceBudgetExhausted")
    assert [c["slice"] for c in small.slices()] == [0, 1, 2, 3, 4]


def test_model_call_budget_ends_the_job(small: Engine) -> None:
    small.script = lambda e: {"status": "continue", "model_calls": 3}
    desc = small.wait(small.start(_name()))
    assert (desc["status"], desc["error"]) == ("FAILED", "ModelCallBudgetExhausted")
    assert "maxModelCalls" in desc["cause"]
    assert len(small.slices()) == 2


def test_a_slice_over_its_task_timeout_fails_the_job(small: Engine) -> None:
    def slow(event: dict[str, Any]) -> dict[str, Any]:
        time.sleep(1.5)
        return {"status": "completed"}

    small.script = slow
    desc = small.wait(small.start(_name()), seconds=120)
    assert (desc["status"], desc["error"]) == ("FAILED", "SliceTimedOut")
    assert len(small.slices()) == 6  # first try + 5 retries, each timed out


def test_an_unanswered_interrupt_times_out(small: Engine) -> None:
    small.script = lambda e: {"status": "interrupted", "interrupts": []}
    desc = small.wait(small.start(_name()))
    assert (desc["status"], desc["error"]) == ("FAILED", "InterruptWaitTimedOut")
    assert len(small.parked) == 1


def test_continuation_carries_the_job_into_new_executions(small: Engine) -> None:
    statuses = iter(["continue", "continue", "continue", "completed"])
    small.script = lambda e: {"status": next(statuses)}
    name = _name()
    first = small.wait(small.start(name))
    assert first["status"] == "SUCCEEDED"
    assert json.loads(first["output"]) == {
        "status": "continued", "job_id": name, "continued_in": f"{name}-c1", "slice": 2,
    }  # fmt: skip
    second = small.wait_named(f"{name}-c1")
    assert second["status"] == "SUCCEEDED"
    assert json.loads(second["output"])["status"] == "completed"
    slices = small.slices()
    assert [c["slice"] for c in slices] == [0, 1, 2, 3]
    assert {c["job_id"] for c in slices} == {name}
    assert [c["execution_id"].endswith("-c1") for c in slices] == [False, False, True, True]
