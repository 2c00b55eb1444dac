"""A stepped Graph run whose parallel nodes wait for people: each branch waits on its own.

The steps are driven the way the serverless runtime drives them (plan / fold with node
reports); a waiting node stays out of the batch until it is answered, its dependants wait
for it, and every node that does not depend on it runs meanwhile.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from elsai.multiagent import GraphBuilder, Status
from elsai.multiagent.graph.steps import GraphSteps
from elsai.session import FileSessionManager
from tests.unit.multiagent.helpers import agent

NODES = ("start", "a", "b", "pa", "pb", "s")
EDGES = (("start", "a"), ("start", "b"), ("a", "pa"), ("b", "pb"), ("pa", "s"), ("pb", "s"))


def _steps(store: Path) -> GraphSteps:
    builder = GraphBuilder()
    for name in NODES:
        builder.add_node(agent(name, [f"{name} done"], store=store), name)
    for a, b in EDGES:
        builder.add_edge(a, b)
    graph = builder.set_session_manager(FileSessionManager("job", str(store))).build()
    return GraphSteps(graph)


def _done() -> dict[str, Any]:
    return {"status": "completed", "stop_reason": "end_turn"}


def _asks(node: str) -> dict[str, Any]:
    ask = {"id": f"ask-{node}", "name": "approve", "reason": node, "tool_use_id": f"t-{node}"}
    return {"status": "interrupted", "stop_reason": "interrupt", "interrupts": [ask]}


def test_an_answered_branch_and_its_next_node_run_while_the_other_branch_waits(
    tmp_path: Path,
) -> None:
    steps = _steps(tmp_path)
    first = steps.plan("Go", "job-1")
    assert first.nodes == ["start"]
    assert steps.fold(first.batch, {"start": _done()}).nodes == ["a", "b"]
    both = steps.plan("Go", "job-1")
    waits = steps.fold(both.batch, {"a": _asks("a"), "b": _asks("b")})
    assert waits.status == Status.INTERRUPTED and waits.nodes == []
    assert sorted((i["node"], i["id"]) for i in waits.interrupts) == [
        ("a", "ask-a"), ("b", "ask-b"),
    ]  # fmt: skip
    # nobody answered: still only waits
    assert steps.plan("Go", "job-1").status == Status.INTERRUPTED

    only_a = steps.plan("Go", "job-1", answered={"a"})
    assert (only_a.status, only_a.nodes) == (Status.EXECUTING, ["a"])
    after_a = steps.fold(only_a.batch, {"a": _done()})
    assert (after_a.status, after_a.nodes) == (Status.EXECUTING, ["pa"])
    publish_a = steps.plan("Go", "job-1")
    assert publish_a.nodes == ["pa"]
    # "s" depends on the waiting branch too: it waits for it, it is not run early
    after_pa = steps.fold(publish_a.batch, {"pa": _done()})
    assert after_pa.status == Status.INTERRUPTED
    assert [i["node"] for i in after_pa.interrupts] == ["b"]

    order = []
    outcome = steps.plan("Go", "job-1", answered={"b"})
    while outcome.status == Status.EXECUTING:
        order.append(list(outcome.nodes))
        folded = steps.fold(outcome.batch, {n: _done() for n in outcome.nodes})
        outcome = steps.plan("Go", "job-1") if folded.status == Status.EXECUTING else folded
    assert order == [["b"], ["pb"], ["s"]]
    assert outcome.status == Status.COMPLETED and outcome.interrupts == []


def test_a_failed_node_still_ends_the_run_while_another_waits(tmp_path: Path) -> None:
    steps = _steps(tmp_path)
    steps.fold(steps.plan("Go", "job-1").batch, {"start": _done()})
    both = steps.plan("Go", "job-1")
    failed = {"status": "failed", "stop_reason": "error", "error": "boom"}
    outcome = steps.fold(both.batch, {"a": _asks("a"), "b": failed})
    assert outcome.status == Status.FAILED and "boom" in str(outcome.error)


def test_a_cycle_is_broken_only_when_no_node_is_busy() -> None:
    from elsai.multiagent.graph.state import GraphEdge
    from elsai.multiagent.graph.topology import Topology

    # x and y feed each other; w (waiting) also feeds y
    edges = [GraphEdge("x", "y"), GraphEdge("y", "x"), GraphEdge("w", "y")]
    topology = Topology(["w", "x", "y"], edges)
    triggers: dict[str, list[str]] = {"x": [], "y": []}
    assert topology.select_ready(triggers) == ["x", "y"]  # nothing else runs: break the cycle
    # w may still complete and feed y: the cycle waits instead of running without it
    assert topology.select_ready(triggers, busy=["w"]) == []
    # a busy node an edge fired into is not planned again while it waits
    assert topology.select_ready({"w": ["x"]}, busy=["w"]) == []
