"""Failures the state machine must end cleanly: a step that always fails, and two writers."""

from __future__ import annotations

import json
from pathlib import Path

from elsai.local import Fault, InvocationInfo, always_fail
from tests.system.local_stack import LocalStack
from tests.system.serverless.helpers import assert_valid_conversation, prompt_count


def _max_attempts(definition: dict, error: str) -> int:
    retriers = definition["States"]["RunSlice"]["Retry"]
    return int(next(r for r in retriers if error in r["ErrorEquals"]).get("MaxAttempts", 3))


def test_a_step_that_always_fails_ends_failed_after_the_retry_budget(stack: LocalStack) -> None:
    rt = stack.rt
    rt.faults = always_fail("the order database is unreachable")
    job = rt.jobs.start("Process order 9")
    final = rt.wait(job.job_id, timeout=120)

    assert final.status == "FAILED"
    assert final.error and final.error.error == "InjectedFailure"  # the class name, as on AWS
    cause = json.loads(final.error.cause or "")
    assert cause["errorType"] == "InjectedFailure"
    assert cause["errorMessage"] == "the order database is unreachable"
    budget = _max_attempts(rt.definition, "States.TaskFailed")
    records = rt.slices(job.job_id)
    assert [r.info.attempt for r in records] == list(
        range(1, budget + 2)
    )  # first try + MaxAttempts
    assert {r.info.slice for r in records} == {0}
    history = rt.history(job.job_id)
    assert [e["type"] for e in history].count("TaskFailed") == budget + 1
    assert history[-1]["type"] == "ExecutionFailed"
    assert any(e.get("stateEnteredEventDetails", {}).get("name") == "JobFailed" for e in history)


def test_two_executions_racing_on_one_session(stack: LocalStack, tmp_path: Path) -> None:
    """Both load the same (empty) session at once; the loser is refused before it runs anything.

    Which refusal it meets depends on who writes first: the create of agent.json
    (`SessionConflictError`, never retried: the job fails) or the ownership lease
    (`AgentInUseError`, retried: the job runs its prompt as the next turn once the first has
    finished). Either way nothing of the loser's ran while the winner ran.
    """
    rt = stack.rt
    session_id = "shared-session"
    barrier = str(tmp_path / "barrier")

    def plan(info: InvocationInfo) -> Fault | None:
        if info.session_id == session_id and info.action == "run_slice" and info.attempt == 1:
            return Fault(barrier=barrier, parties=2, barrier_seconds=3)
        return None

    rt.faults = plan
    prompts = ["Process orders 11 and 12", "Process orders 21 and 22"]
    jobs = [rt.jobs.start(p, session_id=session_id) for p in prompts]
    finals = [rt.wait(j.job_id, timeout=120) for j in jobs]
    refused = [(i, r.error) for i, job in enumerate(jobs) for r in rt.slices(job.job_id) if r.error]
    assert len({i for i, _ in refused}) == 1, refused  # exactly one writer was refused
    loser, error = refused[0]
    winner = 1 - loser
    assert finals[winner].status == "SUCCEEDED", finals
    orders = [{"11", "12"}, {"21", "22"}]
    messages = stack.transcript(session_id)  # contiguous indices, asserted inside
    assert_valid_conversation(messages)
    assert prompt_count(messages, prompts[winner]) == 1
    if error["errorType"] == "SessionConflictError":
        assert finals[loser].status == "FAILED"
        assert finals[loser].error and finals[loser].error.error == "SessionConflictError"
        assert len(rt.slices(jobs[loser].job_id)) == 1  # a conflict is never retried
        assert prompt_count(messages, prompts[loser]) == 0
        ran = orders[winner]
    else:
        assert error["errorType"] == "AgentInUseError"
        assert "in use by another process" in error["errorMessage"]
        assert finals[loser].status == "SUCCEEDED"
        assert prompt_count(messages, prompts[loser]) == 1
        first = next(m for m in messages if m["role"] == "user")
        assert prompts[winner] in str(first)  # the loser's turn came after the winner's
        ran = orders[0] | orders[1]
    assert stack.bookmark(session_id)["execution_status"] == "completed"
    assert stack.runs_per_order(session_id) == dict.fromkeys(sorted(ran), 1)
