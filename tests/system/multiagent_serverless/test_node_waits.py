"""Parallel branches of a Graph job that each ask a person, answered apart.

moto executes the synthesized state machine and the handlers run as real children: one
branch's answer lets that branch (and the node after it) run while the other branch still
waits; the job completes once the second answer comes. Order is asserted from the recorded
invocation timestamps and job states, never from durations.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import pytest

from elsai.client import ApiError
from elsai.local import Fault, InvocationInfo
from elsai.serverless.contract import service_keys
from tests.system.local_stack import LocalStack


def _slices(stack: LocalStack, job_id: str, node: str) -> list[Any]:
    return sorted(
        (r for r in stack.node_slices(job_id) if r.info.agent_id == node), key=lambda r: r.started
    )


def test_one_answered_branch_goes_on_while_the_other_waits_then_the_job_completes(
    stack: LocalStack,
) -> None:
    rt = stack.rt
    job = rt.jobs.start("Draft, get two approvals, publish", agent_id="graph-two-asks")
    job_id = job.job_id
    first = rt.wait(job_id, timeout=120)

    assert first.status == "WAITING_FOR_INPUT", first
    asks = {i.node: i for i in first.interrupts or []}
    assert set(asks) == {"approver_a", "approver_b"}
    assert {i.name for i in asks.values()} == {"approve_draft"}
    rt.jobs.answer(job_id, [{"interruptId": asks["approver_a"].id, "response": "yes-a"}])
    second = rt.wait(job_id, timeout=120)  # parked again: only approver_b is left

    assert second.status == "WAITING_FOR_INPUT", second
    assert [(i.node, i.id) for i in second.interrupts or []] == [
        ("approver_b", asks["approver_b"].id)
    ]
    nodes = second.multi_agent.nodes if second.multi_agent else {}
    assert nodes["approver_a"] == nodes["publish_a"] == "completed"
    assert nodes["approver_b"] == "interrupted"
    assert "publish_b" not in nodes and "summary" not in nodes  # they depend on approver_b
    with pytest.raises(ApiError) as again:
        rt.jobs.answer(job_id, [{"interruptId": asks["approver_a"].id, "response": "no"}])
    assert again.value.status == 409
    rt.jobs.answer(job_id, [{"interruptId": asks["approver_b"].id, "response": "yes-b"}])
    final = rt.wait(job_id, timeout=120)

    assert final.status == "SUCCEEDED", final
    assert "[summary:" in final.result["text"]
    # ORDER: publish_a finished before approver_b was resumed with its answer
    publish_a_end = max(r.started + r.duration_s for r in _slices(stack, job_id, "publish_a"))
    approver_b_resumed = _slices(stack, job_id, "approver_b")[-1].started
    assert publish_a_end < approver_b_resumed
    summary_start = _slices(stack, job_id, "summary")[0].started
    publish_b_end = max(r.started + r.duration_s for r in _slices(stack, job_id, "publish_b"))
    assert publish_b_end < summary_start  # the fan-in waited for the branch that waited
    decisions = Counter(
        (x["node"], x["decision"])
        for x in stack.ledger(job.session_id)
        if x["tool"] == "ask_approval"
    )
    assert decisions == {("approver_a", "yes-a"): 1, ("approver_b", "yes-b"): 1}
    events = rt.jobs.events(job_id, limit=200).events  # the whole job: a few dozen events
    waits = [e["interrupt_ids"] for e in events if e["type"] == "answered"]
    assert sum(e["type"] == "waiting_for_input" for e in events) == 2  # parked twice
    assert waits == [[asks["approver_a"].id], [asks["approver_b"].id]]
    runs = Counter(r.info.agent_id for r in stack.node_slices(job_id))
    assert runs == {"drafter": 1, "approver_a": 2, "approver_b": 2, "publish_a": 1,
                    "publish_b": 1, "summary": 1}  # fmt: skip


def _poll(what: str, check: Any, timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := check()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} after {timeout} s")
        time.sleep(0.1)
    return found


def test_an_answer_while_a_sibling_runs_is_stored_and_the_next_plan_runs_it_without_a_park(
    stack: LocalStack,
) -> None:
    rt = stack.rt
    barrier = stack.ledger_path.parent / "w2-held"

    def plan(info: InvocationInfo) -> Fault | None:
        # w2 runs until the test lets it go: the answer comes while a sibling runs
        if info.action == "node_slice" and info.agent_id == "w2":
            return Fault(barrier=str(barrier), parties=2, barrier_seconds=120)
        return None

    rt.faults = plan
    job = rt.jobs.start("Ask beside work", agent_id="graph-ask-beside-work")
    job_id = job.job_id
    waiting = _poll(
        "wait while w2 runs",
        lambda: (j := rt.jobs.get(job_id)).status == "WAITING_FOR_INPUT" and j,
    )
    (ask,) = waiting.interrupts
    assert ask.node == "approver_a"
    _poll("w2 running", lambda: barrier.exists() and _slices(stack, job_id, "w2"))
    assert _slices(stack, job_id, "w2")[0].result is None  # still running
    rt.jobs.answer(job_id, [{"interruptId": ask.id, "response": "yes"}])
    record = rt.read_json(service_keys.node_waits_key(job_id))
    assert record["task_token"] is None  # nothing parked: the answer is only stored
    assert record["waits"]["approver_a"]["answers"] == [{"interruptId": ask.id, "response": "yes"}]
    (barrier / "released-by-test").touch()
    final = rt.wait(job_id, timeout=120)

    assert final.status == "SUCCEEDED", final
    assert not [
        r for r in rt.invocations if r.info.job_id == job_id and r.info.action == "park_nodes"
    ]
    w2_end = max(r.started + r.duration_s for r in _slices(stack, job_id, "w2"))
    assert _slices(stack, job_id, "approver_a")[-1].started > w2_end  # the next Plan ran it
    decisions = [x["decision"] for x in stack.ledger(job.session_id) if x["tool"] == "ask_approval"]
    assert decisions == ["yes"]
    assert stack.cursor(job.session_id)["status"] == "completed"
