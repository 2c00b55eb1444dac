"""The spec's "With Graph and Swarm" example, as written, with scripted models."""

from __future__ import annotations

from pathlib import Path

import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.multiagent import GraphBuilder
from elsai.session import FileSessionManager
from tests.support.transcripts import assert_valid_transcript
from tests.unit.multiagent.helpers import (
    model_of,
    read_cursor,
    request_text,
    stored_messages,
    tool_call,
)


def test_spec_graph_example_dual_layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    JOB_ID = "job-9"  # noqa: N806 - as the spec writes it
    STORAGE = "./sessions"  # noqa: N806

    @tool
    def get_weather(city: str) -> str:
        """Return weather for a city."""
        return f"Sunny, 72F in {city}"

    researcher = Agent(
        model=ScriptedModel(
            [tool_call("t1", "get_weather", city="Paris"), "Research note: Sunny, 72F in Paris."],
            record="full",
        ),
        tools=[get_weather],
        system_prompt="Use get_weather when asked about weather. Keep answers short.",
        config=AgentConfig(
            agent_id="researcher",
            session_manager=FileSessionManager(session_id=JOB_ID, storage_dir=STORAGE),
            checkpoint=CheckpointConfig(position="both"),
        ),
    )
    writer = Agent(
        model=ScriptedModel(["Paris is sunny at 72F."], record="full"),
        system_prompt="Turn the upstream research note into one short sentence.",
        config=AgentConfig(
            agent_id="writer",
            session_manager=FileSessionManager(session_id=JOB_ID, storage_dir=STORAGE),
            checkpoint=CheckpointConfig(position="both"),
        ),
    )

    builder = GraphBuilder()
    builder.add_node(researcher, "researcher")
    builder.add_node(writer, "writer")
    builder.add_edge("researcher", "writer")
    builder.set_entry_point("researcher")
    # Orchestrator cursor (which node next) — keep this in addition to node CP
    builder.set_session_manager(FileSessionManager(session_id=JOB_ID, storage_dir=STORAGE))
    graph = builder.build()

    result = graph("What's the weather in Paris? Use get_weather, then summarize.")

    assert result.status == "completed"
    assert result.execution_order == ["researcher", "writer"]
    assert (result.completed_nodes, result.failed_nodes, result.total_nodes) == (2, 0, 2)
    assert str(result) == "Paris is sunny at 72F."
    assert result.results["researcher"].metrics["tool_calls"] == 1
    # The writer was asked with the task and the researcher's output.
    seen = request_text(model_of(writer))
    assert "Research note: Sunny, 72F in Paris." in seen
    assert "What's the weather in Paris?" in seen
    assert result.accumulated_usage["totalTokens"] == sum(
        r.usage["totalTokens"] for r in result.results.values()
    )

    session = tmp_path / "sessions" / "session_job-9"
    assert (session / "session.json").is_file()
    assert (session / "multi_agent.json").is_file()
    for agent_id in ("researcher", "writer"):
        folder = session / "agents" / f"agent_{agent_id}"
        assert (folder / "agent.json").is_file()
        assert sorted(p.name for p in (folder / "messages").glob("*.json"))[0] == "message_0.json"
    # The researcher used a tool: its bookmark exists and was finalized at end_turn.
    bookmark = (session / "agents" / "agent_researcher" / "checkpoint.json").read_text()
    assert '"execution_status": "completed"' in bookmark
    assert len(list((session / "agents" / "agent_researcher" / "messages").glob("*.json"))) == 4

    cursor = read_cursor(tmp_path / "sessions", "job-9")
    assert cursor["type"] == "graph" and cursor["schema_version"] == "1.0"
    assert cursor["status"] == "completed"
    assert cursor["completed_nodes"] == ["researcher", "writer"]
    assert cursor["next_nodes"] == []
    assert cursor["node_results"]["researcher"]["text"] == "Research note: Sunny, 72F in Paris."
    assert cursor["accumulated_usage"] == result.accumulated_usage

    for agent_id in ("researcher", "writer"):
        assert_valid_transcript(stored_messages(tmp_path / "sessions", agent_id, "job-9"))
