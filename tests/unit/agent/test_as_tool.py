"""Agent as tool: preserved sub-agents resume inside their own loop; spawn mode is stateless."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager


class Crash(BaseException):
    pass


def call(use_id: str, name: str, **inputs: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": use_id, "name": name, "input": inputs}}],
    }


def test_crash_inside_sub_agent_resumes_inside_it(tmp_path: Path) -> None:
    lookups: list[str] = []

    @tool
    def lookup(sku: str) -> str:
        """Look up stock for a SKU."""
        lookups.append(sku)
        if len(lookups) == 1:
            raise Crash("process died inside the sub-agent's tool")
        return f"{sku}: 12 in stock"

    def build(parent_script: list[Any], sub_script: list[Any]) -> Agent:
        def manager() -> FileSessionManager:
            return FileSessionManager(session_id="job-1", storage_dir=str(tmp_path))

        sub = Agent(
            model=ScriptedModel(sub_script, record="full"),
            tools=[lookup],
            config=AgentConfig(
                agent_id="inventory",
                session_manager=manager(),
                checkpoint=CheckpointConfig(position="both"),
            ),
        )
        return Agent(
            model=ScriptedModel(parent_script, record="full"),
            tools=[
                sub.as_tool(
                    name="inventory", description="Answers stock questions", preserve_context=True
                )
            ],
            config=AgentConfig(
                agent_id="planner",
                session_manager=manager(),
                checkpoint=CheckpointConfig(position="both"),
            ),
        )

    with pytest.raises(Crash):
        build([call("p1", "inventory", input="stock of A1?")], [call("s1", "lookup", sku="A1")])(
            "Plan restock"
        )
    result = build(["Restock not needed."], ["A1 has 12."])("continue")
    assert result.resumed_from_checkpoint is True and str(result) == "Restock not needed."
    assert lookups == ["A1", "A1"]  # re-run exactly once, inside the sub-agent

    sub_dir = tmp_path / "session_job-1/agents/agent_inventory/messages"
    sub_messages = [
        json.loads((sub_dir / f"message_{i}.json").read_text())["message"]
        for i in range(len(list(sub_dir.iterdir())))
    ]
    prompts = [
        b["text"] for m in sub_messages if m["role"] == "user" for b in m["content"] if "text" in b
    ]
    assert prompts == ["stock of A1?"]  # the sub-agent's task was not appended twice
    assert sub_messages[-1]["content"] == [{"text": "A1 has 12."}]
    parent_dir = tmp_path / "session_job-1/agents/agent_planner/messages"
    tool_result = json.loads((parent_dir / "message_2.json").read_text())["message"]["content"][0][
        "toolResult"
    ]
    assert tool_result["content"] == [{"text": "A1 has 12."}] and tool_result["status"] == "success"


def test_preserve_context_keeps_the_sub_agent_conversation() -> None:
    sub = Agent(
        model=ScriptedModel(["first", "second"], record="full"),
        config=AgentConfig(agent_id="helper"),
    )
    parent = Agent(
        model=ScriptedModel(
            [call("a", "helper", input="one"), call("b", "helper", input="two"), "done"],
            record="full",
        ),
        tools=[sub.as_tool()],
    )
    parent("go")
    assert [m["role"] for m in sub.messages] == ["user", "assistant", "user", "assistant"]


def test_spawn_mode_is_fresh_each_call_and_refuses_checkpoints(tmp_path: Path) -> None:
    sub = Agent(
        model=ScriptedModel(["one answer", "another"], record="full"),
        config=AgentConfig(agent_id="helper"),
    )
    spawn_tool = sub.as_tool(mode="spawn")
    parent = Agent(
        model=ScriptedModel(
            [call("a", "helper", input="q1"), call("b", "helper", input="q2"), "done"],
            record="full",
        ),
        tools=[spawn_tool],
    )
    parent("go")
    assert sub.messages == []  # the original keeps no context: each call ran on a fresh copy
    assert sub.model.requests[1].messages == [{"role": "user", "content": [{"text": "q2"}]}]  # type: ignore[attr-defined]

    checkpointed = Agent(
        model=ScriptedModel([], record="full"),
        config=AgentConfig(
            agent_id="cp",
            session_manager=FileSessionManager(session_id="s", storage_dir=str(tmp_path)),
            checkpoint=CheckpointConfig(),
        ),
    )
    with pytest.raises(ValueError, match="preserve_context=True"):
        checkpointed.as_tool(mode="spawn")
