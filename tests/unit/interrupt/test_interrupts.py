"""Interrupts: raised by tools or hooks, persisted, answered later (in another process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.hooks import BeforeToolCallEvent
from elsai.interrupt import InterruptError
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager
from elsai.tools import ToolContext

HERE = Path(__file__).parent


def call(*uses: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": i, "name": n, "input": x}} for i, n, x in uses],
    }


def test_interrupt_in_new_process_resumed_with_responses(tmp_path: Path) -> None:
    child = [sys.executable, str(HERE / "interrupt_child.py")]
    first = subprocess.run(
        [*child, "ask", str(tmp_path)], capture_output=True, text=True, check=True, timeout=60
    )
    asked = json.loads(first.stdout)
    assert asked["stop_reason"] == "interrupt"
    (interrupt,) = asked["interrupts"]
    assert interrupt["name"] == "approve_transfer" and interrupt["reason"] == {"amount": 500}
    agent_json = json.loads((tmp_path / "session_pay-1/agents/agent_payer/agent.json").read_text())
    assert agent_json["interrupt_state"]["pending"][0]["id"] == interrupt["id"]

    answer = json.dumps({"interruptId": interrupt["id"], "response": "approve"})
    second = subprocess.run(
        [*child, "answer", str(tmp_path), answer],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    done = json.loads(second.stdout)
    assert done == {"stop_reason": "end_turn", "text": "Transfer sent.", "resumed": False}
    msg = json.loads(
        (tmp_path / "session_pay-1/agents/agent_payer/messages/message_2.json").read_text()
    )["message"]
    assert msg["content"][0]["toolResult"]["content"][0]["text"] == "sent"
    agent_json = json.loads((tmp_path / "session_pay-1/agents/agent_payer/agent.json").read_text())
    assert agent_json["interrupt_state"] == {}


def test_other_tools_of_the_batch_finish_and_are_not_rerun(tmp_path: Path) -> None:
    runs: list[str] = []

    @tool
    def ask(ctx: ToolContext) -> str:
        """Ask a human."""
        runs.append("ask")
        return str(ctx.interrupt("question", "which colour?"))

    @tool
    def fetch() -> str:
        """Fetch data."""
        runs.append("fetch")
        return "data"

    def build(responses: list[Any]) -> Agent:
        return Agent(
            model=ScriptedModel(responses),
            tools=[ask, fetch],
            config=AgentConfig(
                session_manager=FileSessionManager(session_id="s", storage_dir=str(tmp_path))
            ),
        )

    result = build([call(("a", "ask", {}), ("f", "fetch", {}))])("go")
    assert result.stop_reason == "interrupt" and sorted(runs) == ["ask", "fetch"]
    resumed = build(["blue it is"])
    final = resumed(
        [{"interruptResponse": {"interruptId": result.interrupts[0].id, "response": "blue"}}]
    )
    assert str(final) == "blue it is"
    assert sorted(runs) == ["ask", "ask", "fetch"]  # fetch finished before the pause: not re-run
    results = resumed.messages[2]["content"]
    assert [r["toolResult"]["content"][0] for r in results] == [{"text": "blue"}, {"text": "data"}]


def test_plain_text_or_half_answers_while_pending_are_clear_errors() -> None:
    @tool
    def two_questions(ctx: ToolContext) -> str:
        """Two questions."""
        return "ok"

    @tool
    def q(topic: str, ctx: ToolContext) -> str:
        """Ask about a topic."""
        return str(ctx.interrupt(f"ask-{topic}", topic))

    agent = Agent(
        model=ScriptedModel([call(("1", "q", {"topic": "a"}), ("2", "q", {"topic": "b"})), "done"]),
        tools=[q],
    )
    result = agent("start")
    assert len(result.interrupts) == 2
    with pytest.raises(InterruptError, match="waiting for interrupt responses"):
        agent("just text")
    with pytest.raises(InterruptError, match="missing"):
        agent([{"interruptResponse": {"interruptId": result.interrupts[0].id, "response": "x"}}])
    with pytest.raises(InterruptError, match="unknown"):
        agent([{"interruptResponse": {"interruptId": "nope", "response": "x"}}])
    answers = [
        {"interruptResponse": {"interruptId": i.id, "response": i.reason.upper()}}
        for i in result.interrupts
    ]
    final = agent(answers)
    assert final.stop_reason == "end_turn"
    assert [b["toolResult"]["content"][0]["text"] for b in agent.messages[2]["content"]] == [
        "A",
        "B",
    ]


def test_hook_can_interrupt_before_a_tool_runs(tmp_path: Path) -> None:
    ran: list[str] = []

    @tool
    def deploy(env: str) -> str:
        """Deploy."""
        ran.append(env)
        return f"deployed to {env}"

    def gate(event: BeforeToolCallEvent) -> None:
        if event.interrupt("approve-deploy", {"env": event.tool_use["input"]["env"]}) != "yes":  # type: ignore[index]
            event.cancel_tool = "A human rejected this deployment."

    agent = Agent(
        model=ScriptedModel([call(("d", "deploy", {"env": "prod"})), "ok"]), tools=[deploy]
    )
    agent.hooks.add_callback(BeforeToolCallEvent, gate)
    paused = agent("ship it")
    assert paused.stop_reason == "interrupt" and ran == []
    agent([{"interruptResponse": {"interruptId": paused.interrupts[0].id, "response": "yes"}}])
    assert ran == ["prod"]


def test_interrupt_is_not_auto_resumed_by_the_bookmark(tmp_path: Path) -> None:
    @tool
    def approve(ctx: ToolContext) -> str:
        """Approval."""
        return str(ctx.interrupt("ok?"))

    def build(responses: list[Any]) -> Agent:
        return Agent(
            model=ScriptedModel(responses),
            tools=[approve],
            config=AgentConfig(
                session_manager=FileSessionManager(session_id="s", storage_dir=str(tmp_path)),
                checkpoint=CheckpointConfig(position="both"),
            ),
        )

    build([call(("x", "approve", {}))])("go")
    bookmark = json.loads((tmp_path / "session_s/agents/agent_default/checkpoint.json").read_text())
    assert bookmark["execution_status"] == "active" and bookmark["position"] == "after_model"
    with pytest.raises(InterruptError):
        build([])("continue")  # the bookmark does not silently re-run the interrupted tool
