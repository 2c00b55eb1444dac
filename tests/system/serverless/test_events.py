"""Job events and cancel through the synthesized state machine, with real agent children.

The events of a killed-and-retried job show the failed attempt, the retry and the resume;
paging one event at a time gives the same list as one big page. Cancelling a job mid-tool
stops it, it reports CANCELLED, and the session it leaves is one the next job continues.
"""

from __future__ import annotations

import time
from typing import Any

from elsai.client import ApiError
from elsai.local import Fault, InvocationInfo, LocalRuntime, kill_in_tool
from tests.system.local_stack import LocalStack
from tests.system.serverless.helpers import assert_valid_conversation

PROMPT = "Process orders 1, 2 and 3"


def all_events(rt: LocalRuntime, job_id: str, limit: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = rt.jobs.events(job_id, after=cursor, limit=limit)
        if not page.events:
            return out
        out.extend(page.events)
        cursor = page.cursor


def test_events_show_messages_retry_and_resume_and_page_without_gaps(stack: LocalStack) -> None:
    rt = stack.rt
    rt.faults = kill_in_tool(2, slice=0, attempt=1)
    job = rt.jobs.start(PROMPT)
    assert rt.wait(job.job_id, timeout=90).status == "SUCCEEDED"
    whole = rt.jobs.events(job.job_id, limit=200)
    assert whole.status == "SUCCEEDED"
    kinds = [e["type"] for e in whole.events if e["type"] != "message"]
    assert kinds == [
        "slice_started", "attempt_failed", "retry", "resumed", "slice_ended", "job_ended",
    ]  # fmt: skip
    by_type = {e["type"]: e for e in whole.events}
    assert by_type["attempt_failed"]["error"] == "Runtime.ExitError"
    assert by_type["retry"]["attempt"] == 2
    assert by_type["resumed"]["position"] == "after_model"
    assert by_type["slice_ended"]["status"] == "completed"
    messages = [e for e in whole.events if e["type"] == "message"]
    stored = stack.transcript(job.session_id)
    assert [m["index"] for m in messages] == list(range(len(stored)))
    assert [m["role"] for m in messages] == [m["role"] for m in stored]
    assert messages[0]["text"] == PROMPT
    assert messages[1]["tool_calls"][0]["name"] == "process_order"
    assert messages[2]["tool_results"][0]["status"] == "success"
    assert all_events(rt, job.job_id, 1) == whole.events
    assert rt.jobs.events(job.job_id, after=whole.cursor).events == []


def test_a_second_job_on_a_session_shows_only_its_own_messages(stack: LocalStack) -> None:
    rt = stack.rt
    first = rt.jobs.start("Process order 7", session_id="events-shared")
    assert rt.wait(first.job_id, timeout=60).status == "SUCCEEDED"
    earlier = len(stack.transcript("events-shared"))
    time.sleep(1.1)  # stored messages have seconds precision; the next job starts a second later
    second = rt.jobs.start("Process order 8", session_id="events-shared")
    assert rt.wait(second.job_id, timeout=60).status == "SUCCEEDED"
    shown = [e for e in rt.jobs.events(second.job_id).events if e["type"] == "message"]
    assert shown[0]["index"] == earlier and shown[0]["text"] == "Process order 8"


def test_cancel_mid_tool_stops_the_job_and_the_session_stays_usable(stack: LocalStack) -> None:
    rt = stack.rt

    def slow(info: InvocationInfo) -> Fault | None:
        return Fault(tool_seconds=1.0) if info.action == "run_slice" else None

    rt.faults = slow
    job = rt.jobs.start(PROMPT, session_id="events-cancel")
    deadline = time.monotonic() + 60
    while not stack.ledger("events-cancel"):  # the first tool ran: the job is mid-run
        assert time.monotonic() < deadline, "no tool ran"
        time.sleep(0.05)
    assert rt.jobs.cancel(job.job_id).status == "CANCELLED"
    assert rt.wait(job.job_id, timeout=30).status == "CANCELLED"
    try:
        rt.jobs.cancel(job.job_id)
        raise AssertionError("a second cancel must be refused")
    except ApiError as exc:
        assert exc.status == 409 and "already ended" in exc.body["error"]
    assert rt.jobs.events(job.job_id).events[-1] == {
        **rt.jobs.events(job.job_id).events[-1], "type": "job_ended", "status": "CANCELLED",
    }  # fmt: skip
    deadline = time.monotonic() + 60  # the cut-off child may still finish its tool
    while any(r.returncode is None for r in rt.slices(job.job_id)):
        assert time.monotonic() < deadline, "the cancelled slice never ended"
        time.sleep(0.1)
    rt.faults = None
    after = rt.jobs.start("Process order 9", session_id="events-cancel")
    assert rt.wait(after.job_id, timeout=60).status == "SUCCEEDED"
    assert_valid_conversation(stack.transcript("events-cancel"))
    assert stack.bookmark("events-cancel")["execution_status"] == "completed"
