"""Graph execution: parallel branches, conditions, fan-in, cycles, nesting, inputs."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from elsai import tool
from elsai.hooks import BeforeInvocationEvent
from elsai.multiagent import GraphBuilder, GraphResult, GraphState, Status
from elsai.tools import ToolContext
from tests.unit.multiagent.helpers import agent, model_of, request_text, tool_call


def test_parallel_fan_out_overlaps_and_fan_in_waits_for_both() -> None:
    spans: dict[str, tuple[float, float]] = {}

    @tool
    async def slow(label: str) -> str:
        """Work that takes a while."""
        start = time.perf_counter()
        await asyncio.sleep(0.3)
        spans[label] = (start, time.perf_counter())
        return f"{label} done"

    a = agent("a", ["plan: two branches"])
    b = agent("b", [tool_call("b1", "slow", label="b"), "branch B result"], tools=[slow])
    c = agent("c", [tool_call("c1", "slow", label="c"), "branch C result"], tools=[slow])
    d = agent("d", ["merged"])
    d.hooks.add_callback(
        BeforeInvocationEvent, lambda _: spans.setdefault("d", (time.perf_counter(), 0.0))
    )
    builder = GraphBuilder()
    for node, name in ((a, "a"), (b, "b"), (c, "c"), (d, "d")):
        builder.add_node(node, name)
    builder.add_edge("a", "b").add_edge("a", "c").add_edge("b", "d").add_edge("c", "d")

    result = builder.build()("go")

    assert result.status == Status.COMPLETED
    assert result.execution_order[0] == "a" and result.execution_order[-1] == "d"
    assert sorted(result.execution_order[1:3]) == ["b", "c"]
    (b0, b1), (c0, c1), (d0, _) = spans["b"], spans["c"], spans["d"]
    # Each branch started before the other finished: they ran together, not one after the other.
    assert b0 < c1 and c0 < b1, "the two branches must overlap in time"
    # The fan-in node started only after both branches had finished.
    assert d0 > max(b1, c1), "the fan-in node started before both branches were done"
    assert model_of(d).calls == 1
    merged_input = request_text(model_of(d))
    assert "branch B result" in merged_input and "branch C result" in merged_input
    assert "Original task:\ngo" in merged_input
    assert result.entry_points == ["a"]
    assert result.text == "merged"


def test_conditional_edges_see_the_graph_state() -> None:
    seen: list[tuple[Any, list[str], list[str]]] = []

    def is_tech(state: GraphState) -> bool:
        seen.append((state.task, list(state.completed_nodes), list(state.execution_order)))
        return "tech" in state.results["classify"].text

    classify = agent("classify", ["this is a tech question"])
    tech = agent("tech", ["tech answer"])
    other = agent("other", ["other answer"])
    builder = GraphBuilder()
    builder.add_node(classify, "classify").add_node(tech, "tech").add_node(other, "other")
    builder.add_edge("classify", "tech", condition=is_tech)
    builder.add_edge("classify", "other", condition=lambda state: not is_tech(state))

    result = builder.build()("what is a CPU?")

    assert result.status == "completed"
    assert result.execution_order == ["classify", "tech"]
    assert "other" not in result.results and model_of(other).calls == 0
    assert seen[0] == ("what is a CPU?", ["classify"], ["classify"])
    assert result.output_nodes == ["tech"]


def test_fan_in_with_branches_of_unequal_depth_runs_once() -> None:
    a = agent("a", ["A out"])
    b = agent("b", ["B out"])
    c = agent("c", ["C out"])
    d = agent("d", ["D out"])
    builder = GraphBuilder()
    for node, name in ((a, "a"), (b, "b"), (c, "c"), (d, "d")):
        builder.add_node(node, name)
    builder.add_edge("a", "b").add_edge("b", "c").add_edge("c", "d").add_edge("a", "d")

    result = builder.build()("task")

    assert result.execution_order == ["a", "b", "c", "d"]
    assert model_of(d).calls == 1
    text = request_text(model_of(d))
    assert "From a:\nA out" in text and "From c:\nC out" in text


def test_branches_whose_condition_failed_are_not_waited_for() -> None:
    a = agent("a", ["go left"])
    left = agent("left", ["left out"])
    right = agent("right", ["right out"])
    join = agent("join", ["joined"])
    builder = GraphBuilder()
    for node, name in ((a, "a"), (left, "left"), (right, "right"), (join, "join")):
        builder.add_node(node, name)
    builder.add_edge("a", "left", condition=lambda s: "left" in s.result_text("a"))
    builder.add_edge("a", "right", condition=lambda s: "right" in s.result_text("a"))
    builder.add_edge("left", "join").add_edge("right", "join")

    result = builder.build()("task")

    assert result.status == "completed"
    assert result.execution_order == ["a", "left", "join"]


def test_cycle_with_max_node_executions_revisits_until_approved() -> None:
    writer = agent("writer", ["draft 1", "draft 2"])
    reviewer = agent("reviewer", ["REVISE: add detail", "APPROVED"])
    publisher = agent("publisher", ["published draft 2"])
    builder = GraphBuilder()
    builder.add_node(writer, "writer").add_node(reviewer, "reviewer").add_node(
        publisher, "publisher"
    )
    builder.add_edge("writer", "reviewer")
    builder.add_edge(
        "reviewer", "writer", condition=lambda s: "REVISE" in s.result_text("reviewer")
    )
    builder.add_edge(
        "reviewer", "publisher", condition=lambda s: "APPROVED" in s.result_text("reviewer")
    )
    builder.set_entry_point("writer").set_max_node_executions(10)

    result = builder.build()("write a poem")

    assert result.status == "completed"
    assert result.execution_order == ["writer", "reviewer", "writer", "reviewer", "publisher"]
    assert result.execution_count == 5
    assert "REVISE: add detail" in request_text(model_of(writer), 1)
    assert result.text == "published draft 2"


def test_cycle_exceeding_max_node_executions_fails_clearly_and_next_call_starts_fresh(
    tmp_path: Any,
) -> None:
    from elsai.session import FileSessionManager

    ping = agent("ping", ["ping"] * 10)
    pong = agent("pong", ["pong"] * 10)
    builder = GraphBuilder().add_node(ping, "ping").add_node(pong, "pong")
    builder.add_edge("ping", "pong").add_edge("pong", "ping").set_entry_point("ping")
    builder.set_max_node_executions(3).set_session_manager(
        FileSessionManager("loop", str(tmp_path))
    )
    graph = builder.build()

    result = graph("go")

    assert result.status == "failed"
    assert result.execution_order == ["ping", "pong", "ping"]
    assert result.error is not None and "max_node_executions=3" in result.error
    again = graph("go again")
    assert again.resumed is False and again.execution_order == ["ping", "pong", "ping"]


def test_several_entry_points_all_receive_the_task() -> None:
    one = agent("one", ["one out"])
    two = agent("two", ["two out"])
    builder = GraphBuilder().add_node(one, "one").add_node(two, "two")
    builder.set_entry_point("one").set_entry_point("two")

    result = builder.build()("shared task")

    assert sorted(result.execution_order) == ["one", "two"]
    assert request_text(model_of(one)) == "shared task" == request_text(model_of(two))
    assert sorted(result.output_nodes) == ["one", "two"]


def test_graph_as_a_node_of_another_graph() -> None:
    x = agent("x", ["x out"])
    y = agent("y", ["inner answer"])
    inner = GraphBuilder().add_node(x, "x").add_node(y, "y").add_edge("x", "y").build()
    first = agent("first", ["first out"])
    last = agent("last", ["final"])
    outer = GraphBuilder().add_node(first, "first").add_node(inner, "inner").add_node(last, "last")
    outer.add_edge("first", "inner").add_edge("inner", "last")

    result = outer.build()("task")

    assert result.status == "completed"
    assert result.execution_order == ["first", "inner", "last"]
    nested = result.results["inner"].result
    assert isinstance(nested, GraphResult) and nested.status == "completed"
    assert "From inner:\ninner answer" in request_text(model_of(last))
    assert "From first:\nfirst out" in request_text(model_of(x))
    assert result.accumulated_usage["totalTokens"] == sum(
        r.usage["totalTokens"] for r in result.results.values()
    )


def test_invocation_state_reaches_node_tools() -> None:
    seen: dict[str, Any] = {}

    @tool
    def probe(context: ToolContext) -> str:
        """Look at the invocation state."""
        seen.update(context.invocation_state)
        return "ok"

    node = agent("node", [tool_call("p1", "probe"), "done"], tools=[probe])
    graph = GraphBuilder().add_node(node, "node").build()

    result = graph.invoke_async("task", invocation_state={"user_key": 42})
    outcome = asyncio.run(result)

    assert outcome.status == "completed"
    assert seen["user_key"] == 42 and seen["node_name"] == "node" and seen["graph"] is graph


def test_reset_on_revisit_gives_a_fresh_conversation() -> None:
    worker = agent("worker", ["try 1", "try 2"])
    judge = agent("judge", ["AGAIN", "OK"])
    builder = GraphBuilder().add_node(worker, "worker").add_node(judge, "judge")
    builder.add_edge("worker", "judge").add_edge(
        "judge", "worker", condition=lambda s: s.result_text("judge") == "AGAIN"
    )
    builder.set_entry_point("worker").set_max_node_executions(6).reset_on_revisit()

    result = builder.build()("task")

    assert result.execution_order == ["worker", "judge", "worker", "judge"]
    second = model_of(worker).requests[1]
    assert len(second.messages) == 1, "a revisited node starts from its initial conversation"


def test_swarm_as_a_graph_node() -> None:
    from elsai.multiagent import Swarm
    from tests.unit.multiagent.helpers import handoff

    prep = agent("prep", ["prepared"])
    s1 = agent("s1", [handoff("h1", "s2", "finish it")])
    s2 = agent("s2", ["swarm answer"])
    final = agent("final", ["final answer"])
    builder = (
        GraphBuilder()
        .add_node(prep, "prep")
        .add_node(Swarm([s1, s2]), "team")
        .add_node(final, "final")
    )
    result = builder.add_edge("prep", "team").add_edge("team", "final").build()("task")

    assert result.status == "completed" and result.execution_order == ["prep", "team", "final"]
    assert "From team:\nswarm answer" in request_text(model_of(final))
    assert "From prep:\nprepared" in request_text(model_of(s1))
