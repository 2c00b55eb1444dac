"""The step API (plan / node_call / fold) drives the same run `graph(task)` makes, step by step.

The serverless runtime calls these steps in separate Lambdas; here one process plays every
Lambda, with the same scripted agents, so the layouts can be compared file by file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elsai import tool
from elsai.multiagent import GraphBuilder, Status, Swarm
from elsai.multiagent.graph.steps import GraphSteps
from elsai.multiagent.step_types import OrchestratorSteps
from elsai.multiagent.swarm.steps import SwarmSteps
from elsai.session import FileSessionManager
from tests.unit.multiagent.helpers import agent, read_cursor, tool_call


@tool
def note(text: str) -> str:
    """Write a note.

    Args:
        text: The note.
    """
    return f"noted {text}"


def _graph(store: Path, *, cycle: bool = False) -> Any:
    nodes = {
        "a": agent("a", [tool_call("t1", "note", text="a"), "A done"], tools=[note], store=store),
        "b": agent("b", ["B done", "B again"], store=store),
        "c": agent("c", ["C done"], store=store),
    }
    builder = GraphBuilder()
    for name, node in nodes.items():
        builder.add_node(node, name)
    builder.add_edge("a", "b").add_edge("a", "c")
    if cycle:
        builder.add_edge("b", "a").set_max_node_executions(3).set_entry_point("a")
    return builder.set_session_manager(FileSessionManager("job", str(store))).build()


def _drive(steps: OrchestratorSteps, task: str) -> Any:
    """What the state machine does: plan, run each node of the batch, fold; until the end."""
    outcome = steps.plan(task, "job-1")
    while outcome.status == Status.EXECUTING:
        reports = {}
        for name in outcome.nodes:
            call = steps.node_call(name)
            assert call is not None
            result = steps.node_agent(name)(
                call.input, invocation_id=call.invocation_id, invocation_state=call.invocation_state
            )
            status = "completed" if result.stop_reason != "interrupt" else "interrupted"
            if result.stop_reason == "paused" and not steps.handed_off(name):
                status = "paused"
            reports[name] = {"status": status, "stop_reason": result.stop_reason,
                             "usage": dict(result.metrics.usage)}  # fmt: skip
        folded = steps.fold(outcome.batch, reports)
        assert steps.fold(outcome.batch, reports) == folded  # a retried fold changes nothing
        outcome = steps.plan(task, "job-1") if folded.status == Status.EXECUTING else folded
    return outcome


def _layout(store: Path) -> list[str]:
    return sorted(str(p.relative_to(store)) for p in store.rglob("*.json"))


def test_steps_leave_the_layout_and_cursor_that_graph_call_leaves(tmp_path: Path) -> None:
    in_process = _graph(tmp_path / "one")("Go")
    outcome = _drive(GraphSteps(_graph(tmp_path / "two")), "Go")

    assert in_process.status == outcome.status == Status.COMPLETED
    assert outcome.text == in_process.text == "B done\n\nC done"
    assert _layout(tmp_path / "one") == _layout(tmp_path / "two")
    one, two = read_cursor(tmp_path / "one"), read_cursor(tmp_path / "two")
    for field in ("status", "completed_nodes", "failed_nodes", "next_nodes", "execution_count",
                  "node_executions", "triggers", "accumulated_usage"):  # fmt: skip
        assert one[field] == two[field], field
    assert sorted(one["execution_order"]) == sorted(two["execution_order"])
    assert {n: r["text"] for n, r in one["node_results"].items()} == {
        n: r["text"] for n, r in two["node_results"].items()
    }


def test_max_node_executions_holds_across_steps(tmp_path: Path) -> None:
    in_process = _graph(tmp_path / "one", cycle=True)("Go")
    outcome = _drive(GraphSteps(_graph(tmp_path / "two", cycle=True)), "Go")

    assert outcome.status == in_process.status == Status.FAILED
    assert outcome.error == in_process.error
    assert "max_node_executions=3" in str(outcome.error)


def test_the_execution_timeout_counts_from_the_run_start_across_processes(tmp_path: Path) -> None:
    store = tmp_path / "s"
    builder = GraphBuilder().add_node(agent("a", ["A"], store=store), "a")
    graph = (
        builder.set_session_manager(FileSessionManager("job", str(store)))
        .set_execution_timeout(60)
        .build()
    )
    steps = GraphSteps(graph)
    assert steps.plan("Go", "job-1").nodes == ["a"]
    path = store / "session_job" / "multi_agent.json"
    cursor = json.loads(path.read_text())
    cursor["created_at"] = "2020-01-01T00:00:00Z"  # the run started long ago (in another Lambda)
    path.write_text(json.dumps(cursor))

    outcome = GraphSteps(graph).plan("Go", "job-1")
    assert outcome.status == Status.FAILED
    assert outcome.error == "graph 'graph' execution timed out after 60s (execution_timeout)"


def test_a_node_call_names_the_batch_it_belongs_to(tmp_path: Path) -> None:
    steps = GraphSteps(_graph(tmp_path))
    steps.plan("Go", "job-1")
    with pytest.raises(ValueError, match=r"node 'b' is not in the current batch .*\['a'\]"):
        steps.node_call("b")


def test_a_swarm_driven_by_steps_follows_its_handoff(tmp_path: Path) -> None:
    from tests.unit.multiagent.helpers import handoff

    store = tmp_path
    first = agent("first", [handoff("h1", "second", "your turn"), "unused"], store=store)
    second = agent("second", ["second answers"], store=store)
    swarm = Swarm([first, second], session_manager=FileSessionManager("job", str(store)))
    outcome = _drive(SwarmSteps(swarm), "Go")

    assert outcome.status == Status.COMPLETED and outcome.text == "second answers"
    cursor = read_cursor(store)
    assert cursor["node_history"] == ["first", "second"]
    assert [(h["from_node"], h["to_node"]) for h in cursor["handoffs"]] == [("first", "second")]
