"""GraphBuilder refuses malformed graphs at build time, with messages that say what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from elsai.multiagent import GraphBuilder
from elsai.session import FileSessionManager
from tests.unit.multiagent.helpers import agent


def two_nodes() -> GraphBuilder:
    return GraphBuilder().add_node(agent("a", []), "a").add_node(agent("b", []), "b")


def test_duplicate_node_name() -> None:
    builder = GraphBuilder().add_node(agent("a", []), "x")
    with pytest.raises(ValueError, match="duplicate node name 'x'"):
        builder.add_node(agent("b", []), "x")


def test_same_agent_instance_twice() -> None:
    shared = agent("a", [])
    builder = GraphBuilder().add_node(shared, "one")
    with pytest.raises(ValueError, match="same Agent instance was added twice"):
        builder.add_node(shared, "two")


def test_node_must_be_an_agent_or_orchestrator() -> None:
    with pytest.raises(TypeError, match="must be an Agent or a Graph/Swarm"):
        GraphBuilder().add_node("not an agent", "x")  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["", "a/b", "..", "x" * 200])
def test_node_names_are_validated(bad: str) -> None:
    with pytest.raises(ValueError, match="node name"):
        GraphBuilder().add_node(agent("a", []), bad)


def test_unknown_node_in_edge_fails_at_build() -> None:
    builder = two_nodes().add_edge("a", "nope")
    with pytest.raises(ValueError, match="unknown node 'nope'"):
        builder.build()


def test_unknown_entry_point() -> None:
    with pytest.raises(ValueError, match="entry point 'zzz' is not a node"):
        two_nodes().set_entry_point("zzz").build()


def test_duplicate_edge() -> None:
    with pytest.raises(ValueError, match="duplicate edge 'a' -> 'b'"):
        two_nodes().add_edge("a", "b").add_edge("a", "b").build()


def test_empty_graph() -> None:
    with pytest.raises(ValueError, match="at least one node"):
        GraphBuilder().build()


def test_no_entry_point_when_every_node_has_an_incoming_edge() -> None:
    builder = two_nodes().add_edge("a", "b").add_edge("b", "a").set_max_node_executions(5)
    with pytest.raises(ValueError, match="no entry point"):
        builder.build()


def test_cycle_without_max_node_executions_names_the_cycle() -> None:
    builder = GraphBuilder()
    for name in ("start", "x", "y", "z"):
        builder.add_node(agent(name, []), name)
    builder.add_edge("start", "x").add_edge("x", "y").add_edge("y", "z").add_edge("z", "x")
    with pytest.raises(ValueError, match=r"cycle \(x -> y -> z -> x\).*set_max_node_executions"):
        builder.build()


def test_self_loop_is_a_cycle() -> None:
    builder = two_nodes().add_edge("a", "b").add_edge("b", "b")
    with pytest.raises(ValueError, match=r"cycle \(b -> b\)"):
        builder.build()
    builder.set_max_node_executions(4).build()


def test_entry_points_default_to_nodes_without_incoming_edges() -> None:
    builder = GraphBuilder()
    for name in ("a", "b", "c"):
        builder.add_node(agent(name, []), name)
    graph = builder.add_edge("a", "c").add_edge("b", "c").build()
    assert graph.entry_points == ["a", "b"]


@pytest.mark.parametrize("value", [0, -1, 1.5, True])
def test_limits_are_validated(value: object) -> None:
    with pytest.raises(ValueError, match="max node executions"):
        GraphBuilder().set_max_node_executions(value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [0, -2, "5"])
def test_timeouts_are_validated(value: object) -> None:
    with pytest.raises(ValueError, match="timeout"):
        GraphBuilder().set_node_timeout(value)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout"):
        GraphBuilder().set_execution_timeout(value)  # type: ignore[arg-type]


def test_condition_must_be_callable() -> None:
    with pytest.raises(TypeError, match="condition must be callable"):
        two_nodes().add_edge("a", "b", condition="yes")  # type: ignore[arg-type]


def test_node_agents_must_not_share_a_persisted_identity(tmp_path: Path) -> None:
    one = agent("same", [], store=tmp_path)
    two = agent("same", [], store=tmp_path)
    builder = GraphBuilder().add_node(one, "one").add_node(two, "two")
    with pytest.raises(ValueError, match="unique agent_id"):
        builder.build()


def test_reset_on_revisit_refuses_persisted_agents(tmp_path: Path) -> None:
    builder = GraphBuilder().add_node(agent("a", [], store=tmp_path), "a").reset_on_revisit()
    with pytest.raises(ValueError, match="reset_on_revisit"):
        builder.build()


def test_nested_graph_needs_its_own_session(tmp_path: Path) -> None:
    inner = (
        GraphBuilder()
        .add_node(agent("x", []), "x")
        .set_session_manager(FileSessionManager("job", str(tmp_path)))
        .build()
    )
    outer = (
        GraphBuilder()
        .add_node(inner, "inner")
        .set_session_manager(FileSessionManager("job", str(tmp_path)))
    )
    with pytest.raises(ValueError, match="its own session"):
        outer.build()
