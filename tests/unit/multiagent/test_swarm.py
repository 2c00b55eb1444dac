"""Swarm: handoffs with shared context, limits, ping-pong detection, construction errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from elsai import tool
from elsai.multiagent import Status, Swarm
from tests.unit.multiagent.helpers import agent, handoff, model_of, request_text, tool_call


def test_handoff_chain_a_b_c_with_shared_context() -> None:
    a = agent(
        "a", [handoff("h1", "b", "research done", {"city": "Paris"})], description="researcher"
    )
    b = agent(
        "b", [handoff("h2", "c", "draft ready", {"draft": "Sunny in Paris"})], description="writer"
    )
    c = agent("c", ["Final: it is sunny in Paris."], description="editor")
    swarm = Swarm([a, b, c], entry_point=a)

    result = swarm("Weather report for Paris")

    assert result.status == Status.COMPLETED
    assert result.node_history == ["a", "b", "c"]
    assert [(h.from_node, h.to_node, h.message) for h in result.handoffs] == [
        ("a", "b", "research done"),
        ("b", "c", "draft ready"),
    ]
    assert result.shared_context == {"a": {"city": "Paris"}, "b": {"draft": "Sunny in Paris"}}
    assert str(result) == "Final: it is sunny in Paris."
    assert result.current_node == "c" and result.execution_count == 3
    # The turn ends at the handoff: no extra model call after handoff_to_agent.
    assert (model_of(a).calls, model_of(b).calls, model_of(c).calls) == (1, 1, 1)
    assert result.results["a"].stop_reason == "paused" and result.results["a"].status == "completed"
    seen = request_text(model_of(c))
    assert "Handoff from b: draft ready" in seen
    assert "Original task:\nWeather report for Paris" in seen
    assert '"city": "Paris"' in seen and '"draft": "Sunny in Paris"' in seen
    assert "Agents so far: a -> b" in seen
    assert request_text(model_of(a)) == "Weather report for Paris"
    assert result.accumulated_usage["totalTokens"] == sum(
        r.usage["totalTokens"] for r in result.results.values()
    )


def test_handoff_tool_is_injected_with_the_peers() -> None:
    a = agent("a", [], description="researcher")
    b = agent("b", [], description="writer")
    Swarm([a, b])
    spec = a.tool_registry.get("handoff_to_agent").spec  # type: ignore[union-attr]
    assert spec["inputSchema"]["json"]["properties"]["agent_name"]["enum"] == ["b"]
    assert "- b: writer" in spec["description"]
    assert "handoff_to_agent" in b.tool_names


def test_unknown_target_is_an_error_the_model_sees() -> None:
    a = agent("a", [handoff("h1", "nobody", "help"), "I will answer myself."])
    b = agent("b", [])
    result = Swarm([a, b])("task")
    assert result.status == "completed" and result.node_history == ["a"]
    last_request = json.dumps(model_of(a).requests[1].messages)
    assert "Unknown agent 'nobody'" in last_request


def test_handoff_tool_outside_a_swarm_is_an_error_result() -> None:
    a = agent("a", [handoff("h1", "b", "x"), "ok"])
    b = agent("b", [])
    Swarm([a, b])
    a("direct call")
    assert "only works while this agent runs inside its swarm" in json.dumps(a.messages)


def test_ping_pong_is_detected_and_stopped() -> None:
    a = agent("a", [handoff(f"a{i}", "b", "your turn") for i in range(10)])
    b = agent("b", [handoff(f"b{i}", "a", "no, yours") for i in range(10)])
    c = agent("c", [])
    result = Swarm(
        [a, b, c], repetitive_handoff_detection_window=4, repetitive_handoff_min_unique_agents=3
    )("task")

    assert result.status == "failed"
    assert (
        result.error is not None
        and "repetitive handoffs" in result.error
        and "['a', 'b']" in result.error
    )
    assert result.node_history == ["a", "b", "a"]


def test_max_handoffs_stops_the_run() -> None:
    nodes = [
        agent(n, [handoff(f"{n}1", t, "next")]) for n, t in (("a", "b"), ("b", "c"), ("c", "d"))
    ]
    nodes.append(agent("d", ["done"]))
    result = Swarm(nodes, max_handoffs=2)("task")
    assert result.status == "failed"
    assert result.error is not None and "max_handoffs=2" in result.error
    assert result.node_history == ["a", "b", "c"] and len(result.handoffs) == 2


def test_max_iterations_stops_the_run() -> None:
    nodes = [
        agent(n, [handoff(f"{n}1", t, "next")]) for n, t in (("a", "b"), ("b", "c"), ("c", "d"))
    ]
    nodes.append(agent("d", ["done"]))
    result = Swarm(nodes, max_iterations=2)("task")
    assert result.status == "failed"
    assert result.error == "swarm 'swarm' reached max_iterations=2"
    assert result.node_history == ["a", "b"]


def test_node_timeout_and_failure_statuses() -> None:
    @tool
    async def nap() -> str:
        """Sleep."""
        await asyncio.sleep(5)
        return "late"

    slow = agent("slow", [tool_call("n1", "nap"), "never"], tools=[nap])
    result = Swarm([slow], node_timeout=0.2)("task")
    assert result.status == "failed"
    assert result.error == "node 'slow' failed: node 'slow' timed out after 0.2s (node_timeout)"

    broken = agent("broken", [RuntimeError("model down")])
    result = Swarm([broken])("task")
    assert (
        result.status == "failed"
        and result.error == "node 'broken' failed: RuntimeError: model down"
    )


def test_execution_timeout() -> None:
    @tool
    async def nap() -> str:
        """Sleep."""
        await asyncio.sleep(0.3)
        return "rested"

    a = agent("a", [tool_call("n1", "nap"), handoff("h1", "b", "go")], tools=[nap])
    b = agent("b", [tool_call("n2", "nap"), "done"], tools=[nap])
    result = Swarm([a, b], execution_timeout=0.4)("task")
    assert result.status == "failed"
    assert "execution timed out after 0.4s" in (result.error or "")


def test_construction_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one agent"):
        Swarm([])
    a = agent("a", [])
    with pytest.raises(ValueError, match="passed twice"):
        Swarm([a, a])
    with pytest.raises(ValueError, match="duplicate swarm node name 'x'"):
        Swarm([agent("x", []), agent("x", [])])
    with pytest.raises(ValueError, match="entry point 'zzz' is not a swarm node"):
        Swarm([agent("a", [])], entry_point="zzz")
    with pytest.raises(ValueError, match="is not one of the swarm's nodes"):
        Swarm([agent("a", [])], entry_point=agent("other", []))
    with pytest.raises(TypeError, match="must be Agents"):
        Swarm(["nope"])  # type: ignore[list-item]
    first, second = agent("a", []), agent("b", [])
    Swarm([first, second])
    with pytest.raises(ValueError, match="already has a tool named 'handoff_to_agent'"):
        Swarm([first, second])
    with pytest.raises(ValueError, match="max_handoffs"):
        Swarm([agent("a", [])], max_handoffs=-1)
    with pytest.raises(ValueError, match="node_timeout"):
        Swarm([agent("a", [])], node_timeout=0)


def test_entry_point_by_name_and_default() -> None:
    a, b = agent("a", ["from a"]), agent("b", ["from b"])
    assert Swarm([a, b]).entry_point == "a"
    c, d = agent("c", ["from c"]), agent("d", ["from d"])
    assert Swarm([c, d], entry_point="d")("task").text == "from d"


def test_a_handoff_with_non_dict_context_is_refused() -> None:
    a = agent(
        "a",
        [tool_call("h1", "handoff_to_agent", agent_name="b", message="x", context=[1, 2]), "fine"],
    )
    result = Swarm([a, agent("b", [])])("task")
    assert result.node_history == ["a"]
    assert "context must be a JSON object" in json.dumps(a.messages)


def test_second_handoff_in_one_turn_is_refused() -> None:
    both = {
        "role": "assistant",
        "content": [
            handoff("h1", "b", "first")["content"][0],
            handoff("h2", "c", "second")["content"][0],
        ],
    }
    a = agent("a", [both])
    result = Swarm([a, agent("b", ["b done"]), agent("c", [])])("task")
    assert result.node_history == ["a", "b"]
    assert "already handed off to 'b'" in json.dumps(a.messages)
