"""Slices that hit their deadline return `continue`; the next slice resumes from the bookmark.

The deadline is real: the child's LambdaContext counts down from a 30 s function timeout,
which is already inside the handler's stop margin (150 s by default), so every slice stops at
its first loop boundary: after_model (the model asked for a tool) and after_tools (its result
is saved) alternate, so N orders take 2N + 1 slices.
"""

from __future__ import annotations

import pytest

from elsai.local import Fault, InvocationInfo
from elsai.local.faults import every_slice
from tests.system.local_stack import LocalStack
from tests.system.serverless.helpers import assert_valid_conversation, prompt_count

STOP_AT_FIRST_BOUNDARY = every_slice(Fault(timeout_seconds=30))


def _statuses(stack: LocalStack, job_id: str) -> list[str]:
    return [r.result["status"] for r in stack.rt.slices(job_id) if r.result]


def test_deadline_continue_then_next_slice_resumes_from_the_bookmark(stack: LocalStack) -> None:
    rt = stack.rt
    rt.faults = STOP_AT_FIRST_BOUNDARY
    job = rt.jobs.start("Process orders 1 and 2")
    final = rt.wait(job.job_id, timeout=90)
    assert final.status == "SUCCEEDED", final

    records = rt.slices(job.job_id)
    assert [r.info.slice for r in records] == list(range(len(records)))  # no retries, one per slice
    assert _statuses(stack, job.job_id) == ["continue"] * 4 + ["completed"]
    assert [r.result["stop_reason"] for r in records if r.result][:4] == ["paused"] * 4
    positions = []
    for record in records[1:]:  # each later slice picked up where the previous one stopped
        assert record.result is not None and record.result["resumed_from_checkpoint"] is True
        positions.append(record.result["resume_position"])
        assert (
            record.event["prompt"] is None
        )  # ids only: the state machine never re-sends the prompt
    assert positions == ["after_model", "after_tools", "after_model", "after_tools"]
    sid = job.session_id
    assert stack.runs_per_order(sid) == {"1": 1, "2": 1}
    messages = stack.transcript(sid)
    assert_valid_conversation(messages)
    assert prompt_count(messages, "Process orders 1 and 2") == 1
    assert stack.bookmark(sid)["execution_status"] == "completed"
    states = [
        e["stateEnteredEventDetails"]["name"]
        for e in rt.history(job.job_id)
        if "stateEnteredEventDetails" in e
    ]
    assert states.count("NextSlice") == 4 and states[-1] == "Completed"


@pytest.mark.slow
def test_a_job_longer_than_twenty_slices(stack: LocalStack) -> None:
    rt = stack.rt
    rt.faults = STOP_AT_FIRST_BOUNDARY
    orders = [str(n) for n in range(1, 12)]
    prompt = "Process orders " + ", ".join(orders)
    job = rt.jobs.start(prompt)
    final = rt.wait(job.job_id, timeout=240)
    assert final.status == "SUCCEEDED", final

    records = rt.slices(job.job_id)
    assert len(records) == 2 * len(orders) + 1 > 20
    assert [r.info.slice for r in records] == list(range(len(records)))
    statuses = _statuses(stack, job.job_id)
    assert statuses[:-1] == ["continue"] * (len(records) - 1) and statuses[-1] == "completed"
    assert final.result["text"] == f"All {len(orders)} orders processed: {', '.join(orders)}."
    sid = job.session_id
    assert stack.runs_per_order(sid) == dict.fromkeys(orders, 1)
    messages = stack.transcript(sid)
    assert len(messages) == 2 * len(orders) + 2
    assert_valid_conversation(messages)
    assert prompt_count(messages, prompt) == 1
    assert stack.bookmark(sid)["execution_status"] == "completed"


def test_a_hard_timeout_mid_tool_is_retried_and_resumes(stack: LocalStack) -> None:
    """Slice 1 resumes into a tool slower than its 1 s function timeout: Lambda kills it."""
    rt = stack.rt

    def plan(info: InvocationInfo) -> Fault | None:
        if info.slice == 1 and info.attempt == 1:
            return Fault(timeout_seconds=1, tool_seconds=3)
        return STOP_AT_FIRST_BOUNDARY(info)

    rt.faults = plan
    job = rt.jobs.start("Process order 31")
    final = rt.wait(job.job_id, timeout=90)
    assert final.status == "SUCCEEDED", final

    records = rt.slices(job.job_id)
    assert [(r.info.slice, r.info.attempt) for r in records] == [(0, 1), (1, 1), (1, 2), (2, 1)]
    timed_out = records[1]
    assert timed_out.error is not None and timed_out.error["errorType"] == "Sandbox.Timedout"
    assert "Task timed out after 1.00 seconds" in timed_out.error["errorMessage"]
    assert records[2].result is not None and records[2].result["resume_position"] == "after_model"
    # Killed at the deadline, before the 3 s tool finished: its effect ran once (on the retry).
    assert stack.runs_per_order(job.session_id) == {"31": 1}
    failures = [
        e["taskFailedEventDetails"]["error"]
        for e in rt.history(job.job_id)
        if e["type"] == "TaskFailed"
    ]
    assert failures == ["Sandbox.Timedout"]
