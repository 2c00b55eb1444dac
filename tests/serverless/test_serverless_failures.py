"""Failures the state machine must end cleanly: a step that always fails, and two writers."""

from __future__ import annotations

import json
from pathlib import Path

from serverless_helpers import Stack, assert_valid_conversation, prompt_count

from infra.local import Fault, InvocationInfo, always_fail


def _max_attempts(definition: dict, error: str) -> int:
    retriers = definition["States"]["RunSlice"]["Retry"]
    return int(next(r for r in retriers if error in r["ErrorEquals"]).get("MaxAttempts", 3))


def test_a_step_that_always_fails_ends_failed_after_the_retry_budget(stack: Stack) -> None:
    rt = stack.rt
    rt.faults = always_fail("the order database is unreachable")
    job = rt.start_job("Process order 9")
    final = rt.wait(job["job_id"], timeout=120)

    assert final["status"] == "FAILED"
    assert final["error"]["error"] == "InjectedFailure"  # the exception's class name, as on AWS
    cause = json.loads(final["error"]["cause"])
    assert cause["errorType"] == "InjectedFailure"
    assert cause["errorMessage"] == "the order database is unreachable"
    budget = _max_attempts(rt.definition, "States.TaskFailed")
    records = rt.slices(job["job_id"])
    assert [r.info.attempt for r in records] == list(
        range(1, budget + 2)
    )  # first try + MaxAttempts
    assert {r.info.slice for r in records} == {0}
    history = rt.history(job["job_id"])
    assert [e["type"] for e in history].count("TaskFailed") == budget + 1
    assert history[-1]["type"] == "ExecutionFailed"
    assert any(e.get("stateEnteredEventDetails", {}).get("name") == "JobFailed" for e in history)


def test_two_executions_racing_on_one_session(stack: Stack, tmp_path: Path) -> None:
    """Both load the same (empty) session before either writes; exactly one may win."""
    rt = stack.rt
    session_id = "shared-session"
    barrier = str(tmp_path / "barrier")

    def plan(info: InvocationInfo) -> Fault | None:
        if info.session_id == session_id and info.action == "run_slice":
            return Fault(barrier=barrier, parties=2, barrier_seconds=3)
        return None

    rt.faults = plan
    prompts = ["Process orders 11 and 12", "Process orders 21 and 22"]
    jobs = [rt.start_job(p, session_id=session_id) for p in prompts]
    finals = [rt.wait(j["job_id"], timeout=90) for j in jobs]

    statuses = sorted(f["status"] for f in finals)
    assert statuses == ["FAILED", "SUCCEEDED"], finals
    loser = next(f for f in finals if f["status"] == "FAILED")
    winner_index = next(i for i, f in enumerate(finals) if f["status"] == "SUCCEEDED")
    assert loser["error"]["error"] == "SessionConflictError"
    assert json.loads(loser["error"]["cause"])["errorType"] == "SessionConflictError"
    assert len(rt.slices(loser["job_id"])) == 1  # a conflict is never retried

    messages = stack.transcript(session_id)  # contiguous indices, asserted inside
    assert_valid_conversation(messages)
    assert prompt_count(messages, prompts[winner_index]) == 1
    assert prompt_count(messages, prompts[1 - winner_index]) == 0
    assert stack.bookmark(session_id)["execution_status"] == "completed"
    winner_orders = {"11", "12"} if winner_index == 0 else {"21", "22"}
    assert set(stack.runs_per_order(session_id)) == winner_orders
