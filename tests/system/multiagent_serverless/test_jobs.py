"""Graph and Swarm jobs on the local runtime: moto runs the synthesized ASL, handlers are real children.

Each node runs in Lambda slices of its own (Map branches for a Graph's ready nodes); the
orchestrator's cursor (multi_agent.json) and each node's checkpoint are the only state.
Overlap is asserted from start/end timestamps, never from durations.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from elsai.local import Fault, InvocationInfo
from elsai.session.layout import keys
from tests.system.local_stack import LocalStack


def _node_runs(stack: LocalStack, job_id: str) -> Counter[str]:
    return Counter(r.info.agent_id for r in stack.node_slices(job_id))


def _tool_runs(stack: LocalStack, session_id: str) -> Counter[str]:
    return Counter(x["step"] for x in stack.ledger(session_id) if x["tool"] == "work")


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _span(records: list[Any], node: str) -> tuple[float, float]:
    mine = [r for r in records if r.info.agent_id == node]
    return min(r.started for r in mine), max(r.started + r.duration_s for r in mine)


def test_parallel_branches_overlap_and_the_result_is_composed_from_both(stack: LocalStack) -> None:
    rt = stack.rt
    barrier = str(stack.ledger_path.parent / "writers-barrier")

    def plan(info: InvocationInfo) -> Fault | None:
        # each writer waits (up to 5 s) until both are loaded: only concurrent runs meet here
        if info.action == "node_slice" and info.agent_id.startswith("writer"):
            return Fault(barrier=barrier, parties=2, barrier_seconds=5)
        return None

    rt.faults = plan
    job = rt.jobs.start("Write about otters", agent_id="graph")
    final = rt.wait(job.job_id, timeout=120)

    assert final.status == "SUCCEEDED", final
    text = final.result["text"]
    assert text == (
        "EDITED(writer_a: writer_a-1 done; writer_a-2 done | writer_b: writer_b-1 done; writer_b-2 done)"
    )
    records = stack.node_slices(job.job_id)
    assert [r.info.agent_id for r in records][0] == "researcher"
    assert [r.info.agent_id for r in records][-1] == "editor"
    # the two writers ran in separate Lambda invocations at the same time
    assert _overlap(_span(records, "writer_a"), _span(records, "writer_b"))
    tools = {
        x["node"]: (x["start"], x["end"])
        for x in stack.ledger(job.session_id)
        if x["step"].endswith("-1")
    }
    assert _overlap(tools["writer_a"], tools["writer_b"])
    assert (
        len({r.info.agent_id for r in records if r.result and r.result["status"] == "completed"})
        == 4
    )
    cursor = stack.cursor(job.session_id)
    assert cursor["type"] == "graph" and cursor["status"] == "completed"
    assert (
        cursor["execution_order"][0] == "researcher" and cursor["execution_order"][-1] == "editor"
    )
    assert sorted(cursor["execution_order"][1:3]) == ["writer_a", "writer_b"]
    for node in ("researcher", "writer_a", "writer_b"):  # the dual layer: a bookmark per tool node
        assert (
            rt.read_json(keys.checkpoint_key(job.session_id, node))["execution_status"]
            == "completed"
        )
    assert final.multi_agent.nodes == dict.fromkeys(
        ["researcher", "writer_a", "writer_b", "editor"], "completed"
    )
    # payloads stay small: no state the Map or Fold saw came near Step Functions' 256 KiB
    sizes = [
        len(str(r.event)) + len(str(r.result))
        for r in rt.invocations
        if r.info.job_id == job.job_id
    ]
    assert max(sizes) < 8 * 1024


def test_a_kill_inside_a_parallel_node_retries_only_that_node(stack: LocalStack) -> None:
    rt = stack.rt

    def plan(info: InvocationInfo) -> Fault | None:
        if info.action == "node_slice" and info.agent_id == "writer_a" and info.attempt == 1:
            return Fault(kill_in_tool=1, tool_seconds=0.5)  # its sibling is mid-tool too
        return None

    rt.faults = plan
    job = rt.jobs.start("Write about beavers", agent_id="graph")
    final = rt.wait(job.job_id, timeout=120)

    assert final.status == "SUCCEEDED", final
    assert _node_runs(stack, job.job_id) == {
        "researcher": 1,
        "writer_a": 2,
        "writer_b": 1,
        "editor": 1,
    }
    killed, retried = [r for r in stack.node_slices(job.job_id) if r.info.agent_id == "writer_a"]
    assert killed.killed and retried.result is not None
    assert retried.result["resumed_from_checkpoint"] is True
    assert retried.result["resume_position"] == "after_model"
    runs = _tool_runs(stack, job.session_id)
    # the killed tool ran again on the retry (at-least-once); nothing else ran twice
    assert runs == {
        "researcher-1": 1,
        "writer_a-1": 2,
        "writer_a-2": 1,
        "writer_b-1": 1,
        "writer_b-2": 1,
    }
    assert "writer_a" in final.result["text"] and "writer_b" in final.result["text"]
    _events_name_each_nodes_attempts(stack, job.job_id)


def _all_events(stack: LocalStack, job_id: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    cursor = None
    while True:  # small pages: a node's events must keep their node across page cuts
        page = stack.rt.jobs.events(job_id, after=cursor, limit=3)
        if not page.events:
            return events
        events += page.events
        cursor = page.cursor


def _events_name_each_nodes_attempts(stack: LocalStack, job_id: str) -> None:
    events = _all_events(stack, job_id)
    of = {n: [(e["type"], e.get("attempt")) for e in events if e.get("node") == n]
          for n in ("researcher", "writer_a", "writer_b", "editor")}  # fmt: skip
    assert of["writer_a"] == [
        ("slice_started", None), ("attempt_failed", None), ("retry", 2), ("resumed", None),
        ("slice_ended", None),
    ]  # fmt: skip
    for node in ("researcher", "writer_b", "editor"):
        assert of[node] == [("slice_started", None), ("slice_ended", None)], (node, of[node])
    failed = next(e for e in events if e["type"] == "attempt_failed")
    assert failed["node"] == "writer_a" and failed["state"] == "NodeSlice"
    ended = [e for e in events if e["type"] == "slice_ended" and "node" in e]
    assert {e["status"] for e in ended} == {"completed"}
    # the job's own first slice (it hands over to the graph) names no node, as before
    assert (
        events[0] == {**events[0], "type": "slice_started", "slice": 0} and "node" not in events[0]
    )


def test_a_node_at_its_deadline_continues_in_a_next_slice_of_its_branch(stack: LocalStack) -> None:
    rt = stack.rt

    def plan(info: InvocationInfo) -> Fault | None:
        # a 30 s function timeout is inside the stop margin: stop at every boundary
        if info.action == "node_slice" and info.agent_id == "writer_b":
            return Fault(timeout_seconds=30)
        return None

    rt.faults = plan
    job = rt.jobs.start("Write about herons", agent_id="graph")
    final = rt.wait(job.job_id, timeout=120)

    assert final.status == "SUCCEEDED", final
    writer_b = [r for r in stack.node_slices(job.job_id) if r.info.agent_id == "writer_b"]
    statuses = [r.result["status"] for r in writer_b if r.result]
    assert statuses == ["continue"] * 4 + ["completed"]  # 2 tools: after_model/after_tools each
    assert [r.info.slice for r in writer_b] == [0, 1, 2, 3, 4]
    assert [r.result["resume_position"] for r in writer_b[1:] if r.result] == [
        "after_model",
        "after_tools",
    ] * 2
    assert _tool_runs(stack, job.session_id)["writer_b-1"] == 1
    assert _node_runs(stack, job.job_id)["writer_a"] == 1  # the sibling needed one slice
    states = [
        e["stateEnteredEventDetails"]["name"]
        for e in rt.history(job.job_id)
        if "stateEnteredEventDetails" in e
    ]
    assert states.count("NextNodeSlice") == 4 and states.count("Fold") == 3


def test_a_node_that_always_fails_fails_the_job_with_its_name_and_cause(stack: LocalStack) -> None:
    rt = stack.rt
    job = rt.jobs.start("Print it", agent_id="graph-fail")
    final = rt.wait(job.job_id, timeout=120)

    assert final.status == "FAILED", final
    assert final.error.error == "MultiAgentFailed"
    assert final.error.cause == "node 'broken' failed: RuntimeError: the printer is on fire"
    runs = _node_runs(stack, job.job_id)
    assert runs["researcher"] == 1
    assert runs["broken"] == 1 + 5  # retryMaxAttempts=5: the whole retry budget, then the Catch
    assert stack.cursor(job.session_id)["failed_nodes"] == ["broken"]
    assert final.multi_agent.nodes == {"researcher": "completed", "broken": "failed"}


def test_a_swarm_killed_right_after_its_first_handoff_resumes_at_the_right_node(
    stack: LocalStack,
) -> None:
    rt = stack.rt

    def plan(info: InvocationInfo) -> Fault | None:
        if info.action == "node_slice" and info.agent_id == "specialist" and info.attempt == 1:
            return Fault(kill_in_tool=1)  # the first thing after triage handed off
        return None

    rt.faults = plan
    job = rt.jobs.start("A customer writes", agent_id="swarm")
    final = rt.wait(job.job_id, timeout=120)

    assert final.status == "SUCCEEDED", final
    assert final.result["text"] == "closed: all done"
    assert _node_runs(stack, job.job_id) == {"triage": 1, "specialist": 2, "closer": 1}
    cursor = stack.cursor(job.session_id)
    assert cursor["type"] == "swarm" and cursor["node_history"] == [
        "triage",
        "specialist",
        "closer",
    ]
    assert [(h["from_node"], h["to_node"]) for h in cursor["handoffs"]] == [
        ("triage", "specialist"),
        ("specialist", "closer"),
    ]
    retried = [r for r in stack.node_slices(job.job_id) if r.info.agent_id == "specialist"][1]
    assert retried.result is not None and retried.result["resume_position"] == "after_model"
    handoff_runs = [
        x for x in rt.ledger() if x.get("job_id") == job.job_id and x["tool"] == "handoff_to_agent"
    ]
    assert Counter(x["agent_id"] for x in handoff_runs) == {"triage": 1, "specialist": 1}


def test_an_interrupt_inside_a_node_is_answered_through_the_api(stack: LocalStack) -> None:
    rt = stack.rt
    job = rt.jobs.start("Draft and approve", agent_id="graph-ask")
    waiting = rt.wait(job.job_id, timeout=120)

    assert waiting.status == "WAITING_FOR_INPUT", waiting
    (interrupt,) = waiting.interrupts or []
    assert interrupt.node == "approver" and interrupt.name == "approve_draft"
    assert waiting.multi_agent.nodes == {"drafter": "completed", "approver": "interrupted"}
    rt.jobs.answer(job.job_id, [{"interruptId": interrupt.id, "response": "approve"}])
    final = rt.wait(job.job_id, timeout=120)

    assert final.status == "SUCCEEDED", final
    assert final.result["text"] == "approved: human said approve"
    assert _node_runs(stack, job.job_id) == {"drafter": 1, "approver": 2}
    assert [x["decision"] for x in stack.ledger(job.session_id) if x["tool"] == "ask_approval"] == [
        "approve"
    ]


def test_an_interrupt_inside_a_swarm_node_is_answered_and_the_swarm_finishes(
    stack: LocalStack,
) -> None:
    rt = stack.rt
    job = rt.jobs.start("Needs a yes", agent_id="swarm-ask")
    waiting = rt.wait(job.job_id, timeout=120)

    assert waiting.status == "WAITING_FOR_INPUT", waiting
    (interrupt,) = waiting.interrupts or []
    assert interrupt.node == "approver"
    assert waiting.multi_agent.current_node == "approver"
    rt.jobs.answer(job.job_id, [{"interruptId": interrupt.id, "response": "yes"}])
    final = rt.wait(job.job_id, timeout=120)

    assert final.status == "SUCCEEDED", final
    assert final.result["text"] == "approved: human said yes"
    assert _node_runs(stack, job.job_id) == {"triage": 1, "approver": 2}
    assert stack.cursor(job.session_id)["node_history"] == ["triage", "approver", "approver"]


def test_a_graph_jobs_session_reads_like_any_other_with_the_sessions_cli(stack: LocalStack) -> None:
    """`elsai sessions show/check` on a Graph job: the orchestrator cursor and every node."""
    import json
    import os
    import subprocess
    import sys

    rt = stack.rt
    job = rt.jobs.start("Write about otters", agent_id="graph")
    assert rt.wait(job.job_id, timeout=120).status == "SUCCEEDED"
    env = {**os.environ, "AWS_ENDPOINT_URL_S3": rt.endpoint, "NO_PROXY": "127.0.0.1,localhost"}
    where = ["--s3", f"s3://{rt.bucket}/{rt.storage_prefix}"]  # the caller's owner prefix

    def elsai(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "elsai.cli", "sessions", *args, *where],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )

    show = elsai("show", job.session_id, "--json")
    assert show.returncode == 0, show.stderr
    shown = json.loads(show.stdout)
    assert shown["multi_agent"]["status"] == "completed"
    agents = {a["agent_id"] for a in shown["agents"]}
    assert {"researcher", "writer_a", "writer_b", "editor"} <= agents
    check = elsai("check", job.session_id)
    assert check.returncode == 0, check.stdout + check.stderr
