"""Failed nodes, timeouts and broken conditions: a failed status with the reason, never silence."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from elsai import tool
from elsai.multiagent import GraphBuilder, Status
from elsai.session import FileSessionManager
from tests.unit.multiagent.helpers import agent, model_of, tool_call


@tool
async def nap(seconds: float) -> str:
    """Sleep for a while."""
    await asyncio.sleep(seconds)
    return "rested"


def test_node_exception_fails_the_graph_and_is_recorded_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    a = agent("a", ["a out"])
    b = agent("b", [RuntimeError("model exploded")])
    c = agent("c", ["never"])
    graph = (
        GraphBuilder()
        .add_node(a, "a")
        .add_node(b, "b")
        .add_node(c, "c")
        .add_edge("a", "b")
        .add_edge("b", "c")
        .build()
    )

    with caplog.at_level(logging.ERROR, logger="elsai.multiagent"):
        result = graph("task")

    assert result.status == Status.FAILED
    assert result.results["b"].status == "failed"
    assert result.results["b"].error == "RuntimeError: model exploded"
    assert isinstance(result.results["b"].exception, RuntimeError)
    assert result.error == "node 'b' failed: RuntimeError: model exploded"
    assert (result.completed_nodes, result.failed_nodes) == (1, 1)
    assert "c" not in result.results and model_of(c).calls == 0
    assert any("model exploded" in r.getMessage() for r in caplog.records)


def test_one_failed_branch_lets_its_sibling_finish() -> None:
    root = agent("root", ["go"])
    good = agent("good", [tool_call("n1", "nap", seconds=0.1), "good out"], tools=[nap])
    bad = agent("bad", [ValueError("bad branch")])
    builder = GraphBuilder().add_node(root, "root").add_node(good, "good").add_node(bad, "bad")
    result = builder.add_edge("root", "good").add_edge("root", "bad").build()("task")

    assert result.status == "failed"
    assert (
        result.results["good"].status == "completed" and result.results["good"].text == "good out"
    )
    assert result.results["bad"].status == "failed"


def test_node_timeout_fails_with_a_clear_message() -> None:
    events: list[str] = []

    @tool
    async def long_nap(seconds: float) -> str:
        """Sleep far longer than the node may run, noting how the sleep ends."""
        events.append("started")
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            events.append("cancelled")
            raise
        events.append("finished")
        return "rested"

    sleeper = agent("sleeper", [tool_call("n1", "long_nap", seconds=5), "late"], tools=[long_nap])
    graph = GraphBuilder().add_node(sleeper, "sleeper").set_node_timeout(0.2).build()

    result = graph("task")

    # The graph stopped the node at its timeout instead of waiting for the 5 s nap to end.
    assert events == ["started", "cancelled"]
    assert result.status == "failed"
    assert result.results["sleeper"].error == "node 'sleeper' timed out after 0.2s (node_timeout)"
    assert "timed out" in (result.error or "")


def test_execution_timeout_fails_with_a_clear_message() -> None:
    first = agent("first", [tool_call("n1", "nap", seconds=0.3), "first out"], tools=[nap])
    second = agent("second", [tool_call("n2", "nap", seconds=0.3), "second out"], tools=[nap])
    graph = (
        GraphBuilder()
        .add_node(first, "first")
        .add_node(second, "second")
        .add_edge("first", "second")
        .set_execution_timeout(0.45)
        .build()
    )

    result = graph("task")

    assert result.status == "failed"
    assert result.results["first"].status == "completed"
    assert "graph 'graph' execution timed out after 0.45s (execution_timeout)" in (
        result.results["second"].error or ""
    )


def test_a_timeout_error_raised_by_the_node_itself_is_not_called_a_timeout() -> None:
    node = agent("node", [TimeoutError("socket read timed out")])
    result = GraphBuilder().add_node(node, "node").set_node_timeout(30).build()("task")
    assert result.results["node"].error == "TimeoutError: socket read timed out"


def test_failing_edge_condition_fails_the_graph() -> None:
    def broken(state: object) -> bool:
        raise KeyError("missing")

    graph = (
        GraphBuilder()
        .add_node(agent("a", ["a out"]), "a")
        .add_node(agent("b", ["b out"]), "b")
        .add_edge("a", "b", condition=broken)
        .build()
    )
    result = graph("task")
    assert result.status == "failed"
    assert "edge condition 'a' -> 'b' raised KeyError" in (result.error or "")


def test_a_failed_run_is_continued_by_the_next_call_retrying_the_failed_node(
    tmp_path: Path,
) -> None:
    a = agent("a", ["a out"], store=tmp_path)
    b = agent("b", [RuntimeError("throttled"), "b out"], store=tmp_path)
    graph = (
        GraphBuilder()
        .add_node(a, "a")
        .add_node(b, "b")
        .add_edge("a", "b")
        .set_session_manager(FileSessionManager("job", str(tmp_path)))
        .build()
    )

    first = graph("task")
    assert first.status == "failed"
    second = graph("task")

    assert second.status == "completed" and second.resumed
    assert model_of(a).calls == 1, "a completed node is not re-run"
    assert second.execution_order == ["a", "b", "b"]
    assert second.failed_nodes == 0 and second.error is None
    assert second.results["a"].restored is False  # same process: the live result is kept
