"""End to end through the synthesized state machine on moto: the main job and its crash.

Every Lambda invocation is the real agent handler in a child process; the kill is a real
SIGKILL inside a tool, after the tool's side effect and before its result was saved.
"""

from __future__ import annotations

import pytest

from elsai.client import ApiError
from elsai.local import kill_in_tool
from tests.system.local_stack import LocalStack
from tests.system.serverless.helpers import (
    assert_valid_conversation,
    prompt_count,
    run_slice_events,
)

PROMPT = "Process orders 1, 2 and 3"


def test_happy_path_succeeds_and_leaves_a_completed_session(stack: LocalStack) -> None:
    rt = stack.rt
    job = rt.jobs.start(PROMPT)
    assert job.status == "RUNNING" and job.session_id == job.job_id
    final = rt.wait(job.job_id, timeout=60)

    assert final.status == "SUCCEEDED", final
    assert final.result["status"] == "completed"
    assert final.result["text"] == "All 3 orders processed: 1, 2, 3."
    assert final.result["resumed_from_checkpoint"] is False
    sid = job.session_id
    files = {k.removeprefix(f"session_{sid}/") for k, _ in rt.session_files(sid)}
    assert {
        "session.json",
        "agents/agent_agent/agent.json",
        "agents/agent_agent/checkpoint.json",
    } <= files
    messages = stack.transcript(sid)
    assert len(messages) == 8  # prompt, 3 x (toolUse, toolResult), summary
    assert_valid_conversation(messages)
    assert stack.bookmark(sid)["execution_status"] == "completed"
    assert stack.runs_per_order(sid) == {"1": 1, "2": 1, "3": 1}
    summary = rt.jobs.session(sid)  # GET /sessions/{id} through the API handler
    agent = next(a for a in summary.agents if a.agent_id == "agent")
    assert agent.message_count == 8 and agent.checkpoint
    assert agent.checkpoint["execution_status"] == "completed"
    assert [r.info.attempt for r in rt.slices(job.job_id)] == [1]


def test_lambda_killed_inside_a_tool_is_retried_and_resumes_after_model(stack: LocalStack) -> None:
    rt = stack.rt
    rt.faults = kill_in_tool(2, slice=0, attempt=1)
    job = rt.jobs.start(PROMPT)
    final = rt.wait(job.job_id, timeout=90)
    assert final.status == "SUCCEEDED", final

    first, second = rt.slices(job.job_id)
    assert (first.info.slice, first.info.attempt, second.info.slice, second.info.attempt) == (
        0,
        1,
        0,
        2,
    )
    assert first.returncode == -9 and first.error is not None
    assert (
        first.error["errorType"] == "Runtime.ExitError"
        and "signal: killed" in first.error["errorMessage"]
    )
    assert second.result is not None
    assert second.result["resumed_from_checkpoint"] is True
    assert second.result["resume_position"] == "after_model"
    # The handler's own log line says so too (Powertools JSON on the child's stdout).
    finished = [
        x for x in second.logs if isinstance(x, dict) and x.get("message") == "slice finished"
    ]
    assert finished and finished[0]["resume_position"] == "after_model"
    # Step Functions saw a failed task and retried the same state: the real Retry policy ran.
    history = rt.history(job.job_id)
    assert run_slice_events(history)[:4] == [
        "TaskScheduled",
        "TaskStarted",
        "TaskFailed",
        "TaskScheduled",
    ]
    failed = next(e for e in history if e["type"] == "TaskFailed")
    assert failed["taskFailedEventDetails"]["error"] == "Runtime.ExitError"

    sid = job.session_id
    # Order 2 ran in the killed attempt (side effect done, result lost) and exactly once more.
    assert stack.runs_per_order(sid) == {"1": 1, "2": 2, "3": 1}
    messages = stack.transcript(sid)
    assert prompt_count(messages, PROMPT) == 1  # the retried first slice did not re-append it
    assert_valid_conversation(messages)
    assert len(messages) == 8
    assert stack.bookmark(sid)["execution_status"] == "completed"
    assert final.result["text"] == "All 3 orders processed: 1, 2, 3."


def test_idempotency_key_starts_one_execution(stack: LocalStack) -> None:
    rt = stack.rt
    first = rt.jobs.start("Process order 5", idempotency_key="client-retry-1")
    again = rt.jobs.start("Process order 5", idempotency_key="client-retry-1")
    assert again.job_id == first.job_id
    assert rt.wait(first.job_id, timeout=60).status == "SUCCEEDED"

    late = rt.jobs.start(
        "Process order 5", idempotency_key="client-retry-1"
    )  # retried after it ended
    assert late.job_id == first.job_id
    name = first.job_id
    executions = rt.sfn.list_executions(stateMachineArn=rt.state_machine_arn)["executions"]
    assert [e["name"] for e in executions].count(name) == 1
    assert stack.runs_per_order(first.session_id) == {"5": 1}
    assert [r.info.attempt for r in rt.slices(name)] == [1]

    with pytest.raises(ApiError) as conflict:  # same key, different body
        rt.jobs.start("Process order 6", idempotency_key="client-retry-1")
    assert conflict.value.status == 409
