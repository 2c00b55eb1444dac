"""Swarm persistence: multi_agent.json, and continuing after a crash or an interrupt (in-process)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elsai import tool
from elsai.multiagent import Status, Swarm
from elsai.session import FileSessionManager
from elsai.tools import ToolContext
from tests.support.transcripts import assert_valid_transcript
from tests.unit.multiagent.helpers import (
    Crash,
    HookedStorage,
    agent,
    handoff,
    model_of,
    read_cursor,
    stored_messages,
    tool_call,
)


def make_publish(runs: list[str], crash_on_first: bool) -> Any:
    @tool
    def publish(note: str) -> str:
        """Publish a note."""
        runs.append(note)
        if crash_on_first and len(runs) == 1:
            raise Crash("process died inside publish")
        return f"published {note}"

    return publish


def build(
    store: Path, first: list[Any], second: list[Any], tools: list[Any], manager: Any = None
) -> Swarm:
    researcher = agent("researcher", first, store=store)
    writer = agent("writer", second, tools=tools, store=store)
    return Swarm(
        [researcher, writer],
        entry_point="researcher",
        session_manager=manager or FileSessionManager("job", str(store)),
    )


def test_cursor_records_current_node_history_handoffs_and_context(tmp_path: Path) -> None:
    swarm = build(tmp_path, [handoff("h1", "writer", "write it", {"city": "Paris"})], ["done"], [])
    result = swarm("task")

    assert result.status == "completed"
    cursor = read_cursor(tmp_path)
    assert (
        cursor["type"] == "swarm" and cursor["id"] == "swarm" and cursor["schema_version"] == "1.0"
    )
    assert cursor["status"] == "completed" and cursor["current_node"] == "writer"
    assert cursor["node_history"] == ["researcher", "writer"]
    assert cursor["handoffs"] == [
        {
            "from_node": "researcher",
            "to_node": "writer",
            "message": "write it",
            "context": {"city": "Paris"},
        }
    ]
    assert cursor["shared_context"] == {"researcher": {"city": "Paris"}}
    assert cursor["node_results"]["writer"]["text"] == "done"
    assert cursor["accumulated_usage"] == result.accumulated_usage


def test_crash_inside_node_2_tool_after_a_handoff_resumes_inside_node_2(tmp_path: Path) -> None:
    runs: list[str] = []
    swarm = build(
        tmp_path,
        [handoff("h1", "writer", "publish the note", {"note": "sunny"})],
        [tool_call("p1", "publish", note="sunny")],
        [make_publish(runs, crash_on_first=True)],
    )
    with pytest.raises(Crash):
        swarm("weather")
    cursor = read_cursor(tmp_path)
    assert (cursor["status"], cursor["current_node"], cursor["node_history"]) == (
        "executing",
        "writer",
        ["researcher"],
    )

    swarm = build(tmp_path, [], ["Published."], [make_publish(runs, crash_on_first=False)])
    result = swarm("weather")

    assert result.status == "completed" and result.resumed
    assert model_of(swarm.nodes["researcher"]).calls == 0
    assert runs == ["sunny", "sunny"]
    writer = result.results["writer"]
    assert writer.resumed_from_checkpoint and writer.text == "Published."
    assert result.node_history == ["researcher", "writer"]
    assert result.shared_context == {"researcher": {"note": "sunny"}}
    assert_valid_transcript(stored_messages(tmp_path, "writer"))


def test_crash_after_a_handoff_but_before_the_cursor_write_does_not_rerun_the_node(
    tmp_path: Path,
) -> None:
    def die(key: str, nth: int) -> None:
        if key.endswith("multi_agent.json") and nth == 2:
            raise Crash("died before the cursor recorded the handoff")

    manager = FileSessionManager("job", str(tmp_path))
    manager.storage = HookedStorage(manager.storage, die)
    swarm = build(tmp_path, [handoff("h1", "writer", "go on", {"k": 1})], [], [], manager=manager)
    with pytest.raises(Crash):
        swarm("task")
    assert read_cursor(tmp_path)["current_node"] == "researcher"

    swarm = build(tmp_path, [], ["writer answer"], [])
    result = swarm("task")

    assert result.status == "completed"
    assert model_of(swarm.nodes["researcher"]).calls == 0, (
        "its handoff was found in its agent state"
    )
    assert result.results["researcher"].restored
    assert result.node_history == ["researcher", "writer"]
    assert "Handoff from researcher: go on" in str(
        model_of(swarm.nodes["writer"]).requests[0].messages
    )


def test_failed_swarm_is_continued_by_the_next_call(tmp_path: Path) -> None:
    swarm = build(
        tmp_path, [handoff("h1", "writer", "go")], [RuntimeError("throttled"), "recovered"], []
    )
    assert swarm("task").status == "failed"
    result = swarm("task")
    assert result.status == "completed" and result.text == "recovered"
    assert model_of(swarm.nodes["researcher"]).calls == 1
    assert result.node_history == ["researcher", "writer", "writer"]


def test_interrupt_inside_a_swarm_node_and_resume_with_responses(tmp_path: Path) -> None:
    @tool
    def confirm(context: ToolContext) -> str:
        """Ask a human."""
        return f"human said {context.interrupt('confirm', 'ok to publish?')}"

    swarm = build(
        tmp_path, [handoff("h1", "writer", "ask first")], [tool_call("c1", "confirm")], [confirm]
    )
    result = swarm("task")
    assert result.status == Status.INTERRUPTED and len(result.interrupts) == 1
    interrupt_id = result.interrupts[0].id
    assert read_cursor(tmp_path)["status"] == "interrupted"

    swarm = build(tmp_path, [], ["Published after confirmation."], [confirm])
    result = swarm([{"interruptResponse": {"interruptId": interrupt_id, "response": "yes"}}])

    assert result.status == "completed" and result.text == "Published after confirmation."
    assert "human said yes" in str(swarm.nodes["writer"].messages)
    assert model_of(swarm.nodes["researcher"]).calls == 0


def test_completed_swarm_starts_fresh_on_the_next_call(tmp_path: Path) -> None:
    swarm = build(tmp_path, ["first", "second"], [], [])
    assert swarm("one").text == "first"
    run_id = read_cursor(tmp_path)["run_id"]
    again = swarm("two")
    assert again.text == "second" and not again.resumed
    assert read_cursor(tmp_path)["run_id"] != run_id


def test_handing_back_to_a_persisted_agent_keeps_its_transcript_valid(tmp_path: Path) -> None:
    a = agent("a", [handoff("h1", "b", "check this"), "a's final answer"], store=tmp_path)
    b = agent("b", [handoff("h2", "a", "checked, finish it")], store=tmp_path)
    swarm = Swarm(
        [a, b],
        session_manager=FileSessionManager("job", str(tmp_path)),
        repetitive_handoff_detection_window=0,
    )

    result = swarm("task")

    assert result.status == "completed" and result.text == "a's final answer"
    assert result.node_history == ["a", "b", "a"]
    for agent_id in ("a", "b"):
        assert_valid_transcript(stored_messages(tmp_path, agent_id))
    assert "Handoff from b: checked, finish it" in str(stored_messages(tmp_path, "a")[2])
