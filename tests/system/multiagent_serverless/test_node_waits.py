"""Parallel branches of a Graph job that each ask a person, answered apart.

moto executes the synthesized state machine and the handlers run as real children: one
branch's answer lets that branch (and the node after it) run while the other branch still
waits; the job completes once the second answer comes. Order is asserted from the recorded
invocation timestamps and job states, never from durations.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from elsai.local.api import LocalApiError
from tests.system.local_stack import LocalStack


def _slices(stack: LocalStack, job_id: str, node: str) -> list[Any]:
    return sorted(
        (r for r in stack.node_slices(job_id) if r.info.agent_id == node), key=lambda r: r.started
    )


def test_one_answered_branch_goes_on_while_the_other_waits_then_the_job_completes(
    stack: LocalStack,
) -> None:
    rt = stack.rt
    job = rt.start_job("Draft, get two approvals, publish", agent_id="graph-two-asks")
    job_id = job["job_id"]
    first = rt.wait(job_id, timeout=120)

    assert first["status"] == "WAITING_FOR_INPUT", first
    asks = {i["node"]: i for i in first["interrupts"]}
    assert set(asks) == {"approver_a", "approver_b"}
    assert {i["name"] for i in asks.values()} == {"approve_draft"}
    rt.answer(job_id, [{"interruptId": asks["approver_a"]["id"], "response": "yes-a"}])
    second = rt.wait(job_id, timeout=120)  # parked again: only approver_b is left

    assert second["status"] == "WAITING_FOR_INPUT", second
    assert [(i["node"], i["id"]) for i in second["interrupts"]] == [
        ("approver_b", asks["approver_b"]["id"])
    ]
    nodes = second["multi_agent"]["nodes"]
    assert nodes["approver_a"] == nodes["publish_a"] == "completed"
    assert nodes["approver_b"] == "interrupted"
    assert "publish_b" not in nodes and "summary" not in nodes  # they depend on approver_b
    with pytest.raises(LocalApiError) as again:
        rt.answer(job_id, [{"interruptId": asks["approver_a"]["id"], "response": "no"}])
    assert again.value.status == 409
    rt.answer(job_id, [{"interruptId": asks["approver_b"]["id"], "response": "yes-b"}])
    final = rt.wait(job_id, timeout=120)

    assert final["status"] == "SUCCEEDED", final
    assert "[summary:" in final["result"]["text"]
    # ORDER: publish_a finished before approver_b was resumed with its answer
    publish_a_end = max(r.started + r.duration_s for r in _slices(stack, job_id, "publish_a"))
    approver_b_resumed = _slices(stack, job_id, "approver_b")[-1].started
    assert publish_a_end < approver_b_resumed
    summary_start = _slices(stack, job_id, "summary")[0].started
    publish_b_end = max(r.started + r.duration_s for r in _slices(stack, job_id, "publish_b"))
    assert publish_b_end < summary_start  # the fan-in waited for the branch that waited
    decisions = Counter(
        (x["node"], x["decision"])
        for x in stack.ledger(job["session_id"])
        if x["tool"] == "ask_approval"
    )
    assert decisions == {("approver_a", "yes-a"): 1, ("approver_b", "yes-b"): 1}
    events = rt.events(job_id, limit=200)["events"]  # the whole job: a few dozen events
    waits = [e["interrupt_ids"] for e in events if e["type"] == "answered"]
    assert sum(e["type"] == "waiting_for_input" for e in events) == 2  # parked twice
    assert waits == [[asks["approver_a"]["id"]], [asks["approver_b"]["id"]]]
    runs = Counter(r.info.agent_id for r in stack.node_slices(job_id))
    assert runs == {"drafter": 1, "approver_a": 2, "approver_b": 2, "publish_a": 1,
                    "publish_b": 1, "summary": 1}  # fmt: skip
