"""Graph persistence: the cursor in multi_agent.json, and continuing a run after a crash,
an interrupt or a pause (crashes simulated in-process; real processes in test_crash)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from elsai import tool
from elsai.multiagent import Graph, GraphBuilder, MultiAgentBase, MultiAgentResult, Status
from elsai.session import FileSessionManager, SessionConflictError, SessionCorruptError
from elsai.tools import ToolContext
from tests.support.transcripts import assert_valid_transcript
from tests.unit.multiagent.helpers import (
    Crash,
    HookedStorage,
    agent,
    model_of,
    read_cursor,
    request_text,
    stored_messages,
    tool_call,
)


class Ledger:
    def __init__(self) -> None:
        self.runs: list[str] = []
        self.crash_on: set[int] = set()

    def publish_tool(self) -> Any:
        ledger = self

        @tool
        def publish(note: str) -> str:
            """Publish a note."""
            ledger.runs.append(note)
            if len(ledger.runs) in ledger.crash_on:
                raise Crash("process died inside publish")
            return f"published {note!r}"

        return publish


def pipeline(store: Path, ledger: Ledger, first: list[Any], second: list[Any]) -> Graph:
    a = agent("researcher", first, store=store)
    b = agent("writer", second, tools=[ledger.publish_tool()], store=store)
    builder = (
        GraphBuilder()
        .add_node(a, "researcher")
        .add_node(b, "writer")
        .add_edge("researcher", "writer")
    )
    return builder.set_session_manager(FileSessionManager("job", str(store))).build()


def test_crash_inside_node_2_tool_resumes_node_2_and_never_reruns_node_1(tmp_path: Path) -> None:
    ledger = Ledger()
    ledger.crash_on = {1}
    graph = pipeline(
        tmp_path, ledger, ["note: sunny"], [tool_call("p1", "publish", note="sunny"), "never used"]
    )
    with pytest.raises(Crash):
        graph("weather report")

    cursor = read_cursor(tmp_path)
    assert cursor["status"] == "executing"
    assert cursor["completed_nodes"] == ["researcher"]
    assert cursor["next_nodes"] == ["writer"] and cursor["next_inputs"] == {
        "writer": ["researcher"]
    }
    usage_before = cursor["accumulated_usage"]
    assert usage_before["totalTokens"] > 0

    # "New process": rebuild every agent and the graph with the same ids.
    graph = pipeline(tmp_path, ledger, [], ["Published the sunny note."])
    result = graph("weather report")

    assert result.status == "completed" and result.resumed
    researcher, writer = graph.nodes["researcher"].executor, graph.nodes["writer"].executor
    assert model_of(researcher).calls == 0, "node 1 is not re-run"  # type: ignore[arg-type]
    assert (
        result.results["researcher"].restored and result.results["researcher"].text == "note: sunny"
    )
    assert ledger.runs == ["sunny", "sunny"], "the interrupted tool re-ran once, from the bookmark"
    node2 = result.results["writer"]
    assert node2.resumed_from_checkpoint
    assert node2.result is not None and node2.result.resume_position == "after_model"  # type: ignore[union-attr]
    assert model_of(writer).calls == 1  # type: ignore[arg-type]
    assert (
        result.accumulated_usage["totalTokens"]
        == usage_before["totalTokens"] + node2.usage["totalTokens"]
    )
    assert result.execution_order == ["researcher", "writer"]
    messages = stored_messages(tmp_path, "writer")
    assert_valid_transcript(messages)
    prompts = [
        m for m in messages if any("Original task" in b.get("text", "") for b in m["content"])
    ]
    assert len(prompts) == 1, "the node's input was recorded exactly once"


def test_cursor_is_written_at_start_and_after_each_node(tmp_path: Path) -> None:
    manager = FileSessionManager("job", str(tmp_path))
    hooked = HookedStorage(manager.storage, lambda key, nth: None)
    manager.storage = hooked
    a, b = agent("a", ["a out"], store=tmp_path), agent("b", ["b out"], store=tmp_path)
    graph = (
        GraphBuilder()
        .add_node(a, "a")
        .add_node(b, "b")
        .add_edge("a", "b")
        .set_session_manager(manager)
        .build()
    )

    graph("task")

    writes = hooked.json_writes("multi_agent.json")
    assert [(w["status"], w["completed_nodes"], w["next_nodes"]) for w in writes] == [
        ("executing", [], ["a"]),
        ("executing", ["a"], ["b"]),
        ("completed", ["a", "b"], []),
    ]
    assert writes[1]["node_results"]["a"]["text"] == "a out"
    assert len({w["run_id"] for w in writes}) == 1
    assert {w["created_at"] for w in writes} == {writes[0]["created_at"]}


def test_completed_cursor_means_the_next_call_starts_a_fresh_run(tmp_path: Path) -> None:
    a = agent("a", ["first answer", "second answer"], store=tmp_path)
    graph = (
        GraphBuilder()
        .add_node(a, "a")
        .set_session_manager(FileSessionManager("job", str(tmp_path)))
        .build()
    )

    first = graph("question 1")
    run_1 = read_cursor(tmp_path)["run_id"]
    second = graph("question 2")

    assert (first.text, second.text) == ("first answer", "second answer")
    assert second.resumed is False
    cursor = read_cursor(tmp_path)
    assert cursor["run_id"] != run_1 and cursor["task"] == "question 2"
    assert cursor["accumulated_usage"] == second.accumulated_usage


def test_kill_between_node_completion_and_cursor_write_loses_nothing(tmp_path: Path) -> None:
    def die_on_second_cursor_write(key: str, nth: int) -> None:
        if key.endswith("multi_agent.json") and nth == 2:
            raise Crash("process died before multi_agent.json recorded node 1")

    manager = FileSessionManager("job", str(tmp_path))
    manager.storage = HookedStorage(manager.storage, die_on_second_cursor_write)
    a = agent("a", ["a's stored answer"], store=tmp_path)
    graph = (
        GraphBuilder()
        .add_node(a, "a")
        .add_node(agent("b", [], store=tmp_path), "b")
        .add_edge("a", "b")
    )
    with pytest.raises(Crash):
        graph.set_session_manager(manager).build()("task")
    assert read_cursor(tmp_path)["next_nodes"] == ["a"]

    a2, b2 = agent("a", [], store=tmp_path), agent("b", ["b out"], store=tmp_path)
    graph2 = GraphBuilder().add_node(a2, "a").add_node(b2, "b").add_edge("a", "b")
    result = graph2.set_session_manager(FileSessionManager("job", str(tmp_path))).build()("task")

    assert result.status == "completed"
    assert model_of(a2).calls == 0, (
        "re-invoked with the same invocation id: the stored answer, no model call"
    )
    assert result.results["a"].text == "a's stored answer"
    assert "a's stored answer" in json.dumps(model_of(b2).requests[0].messages)
    assert len(stored_messages(tmp_path, "a")) == 2


def test_interrupt_inside_a_node_stops_the_graph_and_responses_resume_it(tmp_path: Path) -> None:
    answers: list[Any] = []

    @tool
    def pay(amount: int, context: ToolContext) -> str:
        """Pay after a human approves."""
        answer = context.interrupt("approval", {"amount": amount})
        answers.append(answer)
        return f"paid {amount}: {answer}"

    def build(first: list[Any], second: list[Any]) -> Graph:
        a = agent("a", first, store=tmp_path)
        b = agent("b", second, tools=[pay], store=tmp_path)
        builder = GraphBuilder().add_node(a, "a").add_node(b, "b").add_edge("a", "b")
        return builder.set_session_manager(FileSessionManager("job", str(tmp_path))).build()

    result = build(["a out"], [tool_call("x1", "pay", amount=5)])("task")

    assert result.status == Status.INTERRUPTED
    assert result.interrupted_nodes == ["b"] and len(result.interrupts) == 1
    interrupt = result.interrupts[0]
    cursor = read_cursor(tmp_path)
    assert cursor["status"] == "interrupted" and cursor["next_nodes"] == ["b"]
    assert cursor["node_results"]["b"]["interrupts"][0]["id"] == interrupt.id

    graph = build([], ["paid"])  # a new process, days later
    resumed = graph([{"interruptResponse": {"interruptId": interrupt.id, "response": "approved"}}])

    assert resumed.status == "completed" and resumed.resumed
    assert answers == ["approved"]
    assert resumed.execution_order == ["a", "b", "b"]
    assert model_of(graph.nodes["a"].executor).calls == 0  # type: ignore[arg-type]
    assert resumed.interrupted_nodes == [] and resumed.text == "paid"


class PausingNode(MultiAgentBase):
    """A nested orchestrator that pauses on its first call."""

    def __init__(self) -> None:
        self.id = "pauser"
        self.calls: list[Any] = []

    async def invoke_async(
        self, task: Any, *, invocation_state: Any = None, **kwargs: Any
    ) -> MultiAgentResult:
        self.calls.append(task)
        status = Status.PAUSED if len(self.calls) == 1 else Status.COMPLETED
        return MultiAgentResult(status=status)

    def as_steps(self) -> Any:
        raise TypeError("a test orchestrator does not run as steps")


def test_a_paused_node_pauses_the_graph_and_the_next_call_continues_it(tmp_path: Path) -> None:
    pauser = PausingNode()
    after = agent("after", ["after out"], store=tmp_path)
    graph = (
        GraphBuilder()
        .add_node(pauser, "pauser")
        .add_node(after, "after")
        .add_edge("pauser", "after")
        .set_session_manager(FileSessionManager("job", str(tmp_path)))
        .build()
    )

    first = graph("task")
    assert first.status == "paused" and read_cursor(tmp_path)["next_nodes"] == ["pauser"]
    second = graph("task")

    assert second.status == "completed"
    assert pauser.calls == ["task", "task"] and model_of(after).calls == 1


def test_a_second_writer_gets_a_conflict_error(tmp_path: Path) -> None:
    @tool
    def meddle() -> str:
        """Another process writes the same cursor."""
        other = FileSessionManager("job", str(tmp_path))
        found = other.read_multi_agent()
        assert found is not None
        other.write_multi_agent({**found[0], "meddled": True}, found[1])
        return "done"

    a = agent("a", [tool_call("m1", "meddle"), "a out"], tools=[meddle], store=tmp_path)
    graph = (
        GraphBuilder()
        .add_node(a, "a")
        .set_session_manager(FileSessionManager("job", str(tmp_path)))
        .build()
    )
    with pytest.raises(SessionConflictError):
        graph("task")


def test_cursor_of_another_orchestrator_or_bad_schema_is_refused(tmp_path: Path) -> None:
    manager = FileSessionManager("job", str(tmp_path))
    graph = GraphBuilder().add_node(agent("a", ["x"]), "a").set_session_manager(manager).build()
    manager.write_multi_agent({"type": "swarm", "id": "swarm"}, None)
    with pytest.raises(ValueError, match="'swarm' orchestrator, not a 'graph'"):
        graph("task")

    found = manager.read_multi_agent()
    assert found is not None
    manager.write_multi_agent(
        {"type": "graph", "id": "other", "run_id": "r", "status": "executing", "task": "t"},
        found[1],
    )
    with pytest.raises(ValueError, match="belongs to graph 'other'"):
        graph("task")

    found = manager.read_multi_agent()
    assert found is not None
    manager.write_multi_agent(
        {
            "type": "graph",
            "id": "graph",
            "schema_version": "9",
            "run_id": "r",
            "status": "x",
            "task": "t",
        },
        found[1],
    )
    with pytest.raises(SessionCorruptError, match="multi_agent.json"):
        graph("task")


def test_task_with_binary_content_round_trips_through_the_cursor(tmp_path: Path) -> None:
    a = agent("a", ["a out"], store=tmp_path)
    b = agent("b", [RuntimeError("fail once"), "b out"], store=tmp_path)
    task = [
        {"text": "describe"},
        {"image": {"format": "png", "source": {"bytes": b"\x89PNG\x00\xff"}}},
    ]
    builder = GraphBuilder().add_node(a, "a").add_node(b, "b").add_edge("a", "b")
    graph = builder.set_session_manager(FileSessionManager("job", str(tmp_path))).build()
    assert graph(task).status == "failed"  # type: ignore[arg-type]

    rebuilt = GraphBuilder().add_node(agent("a", [], store=tmp_path), "a")
    rebuilt.add_node(b2 := agent("b", ["b out"], store=tmp_path), "b").add_edge("a", "b")
    result = rebuilt.set_session_manager(FileSessionManager("job", str(tmp_path))).build()(task)  # type: ignore[arg-type]
    assert result.status == "completed"
    assert result.state is not None and result.state.task == task
    assert model_of(b2).calls == 1


def test_invocation_id_makes_a_completed_call_exactly_once(tmp_path: Path) -> None:
    a = agent("a", ["the only answer"], store=tmp_path)
    graph = (
        GraphBuilder()
        .add_node(a, "a")
        .set_session_manager(FileSessionManager("job", str(tmp_path)))
        .build()
    )

    first = asyncio.run(graph.invoke_async("task", invocation_id="request-1"))
    again = asyncio.run(graph.invoke_async("task", invocation_id="request-1"))

    assert first.text == again.text == "the only answer"
    assert again.resumed and again.status == "completed"
    assert model_of(a).calls == 1
    assert read_cursor(tmp_path)["invocation_id"] == "request-1"


def test_nested_graph_that_completed_before_the_parent_recorded_it_is_not_rerun(
    tmp_path: Path,
) -> None:
    def die_after_inner(key: str, nth: int) -> None:
        if key.endswith("multi_agent.json") and nth == 3:
            raise Crash("died before the outer cursor recorded the nested graph")

    def build(
        x_script: list[Any], first_script: list[Any], last_script: list[Any], manager: Any
    ) -> tuple[Graph, Any]:
        x = agent("x", x_script, store=tmp_path, session_id="inner-job")
        inner = (
            GraphBuilder()
            .add_node(x, "x")
            .set_graph_id("inner")
            .set_session_manager(FileSessionManager("inner-job", str(tmp_path)))
            .build()
        )
        first = agent("first", first_script, store=tmp_path, session_id="outer-job")
        last = agent("last", last_script, store=tmp_path, session_id="outer-job")
        builder = (
            GraphBuilder().add_node(first, "first").add_node(inner, "inner").add_node(last, "last")
        )
        builder.add_edge("first", "inner").add_edge("inner", "last").set_session_manager(manager)
        return builder.build(), x

    manager = FileSessionManager("outer-job", str(tmp_path))
    manager.storage = HookedStorage(manager.storage, die_after_inner)
    graph, _ = build(["x out"], ["first out"], [], manager)
    with pytest.raises(Crash):
        graph("task")
    assert read_cursor(tmp_path, "inner-job")["status"] == "completed"

    graph, x = build([], [], ["last out"], FileSessionManager("outer-job", str(tmp_path)))
    result = graph("task")

    assert result.status == "completed" and result.text == "last out"
    assert model_of(x).calls == 0, "the nested graph returned its stored result"
    assert "From inner:\nx out" in request_text(model_of(graph.nodes["last"].executor))  # type: ignore[arg-type]
