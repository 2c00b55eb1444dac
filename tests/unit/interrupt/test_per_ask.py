"""Each ask of a tool is its own interrupt: one approval never answers another request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.hooks import BeforeToolCallEvent
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager
from elsai.tools import ToolContext

INVOICES = [{"id": "INV-1", "amount": 10}, {"id": "INV-2", "amount": 90_000}]
PAY = {
    "role": "assistant",
    "content": [{"toolUse": {"toolUseId": "p1", "name": "pay_invoices", "input": {}}}],
}


def _build(root: Path, paid: list[tuple[str, Any]], responses: list[Any]) -> Agent:
    @tool
    def pay_invoices(ctx: ToolContext) -> str:
        """Pay each invoice once a person approves it."""
        answers = [
            (inv["id"], ctx.interrupt("approve_payment", {"invoice": inv})) for inv in INVOICES
        ]
        for invoice_id, answer in answers:
            if answer == "approve":
                paid.append((invoice_id, answer))
        return ", ".join(f"{i}: {a}" for i, a in answers)

    return Agent(
        model=ScriptedModel(responses),
        tools=[pay_invoices],
        config=AgentConfig(
            agent_id="payer",
            session_manager=FileSessionManager(session_id="invoices", storage_dir=str(root)),
            checkpoint=CheckpointConfig(position="both"),
        ),
    )


def _answer(interrupt_id: str, response: Any) -> list[Any]:
    return [{"interruptResponse": {"interruptId": interrupt_id, "response": response}}]


def test_each_invoice_is_its_own_interrupt_answered_on_its_own(tmp_path: Path) -> None:
    paid: list[tuple[str, Any]] = []
    first = _build(tmp_path, paid, [PAY])("Pay the open invoices.")
    assert first.stop_reason == "interrupt"
    (ask_one,) = first.interrupts
    assert ask_one.reason == {"invoice": INVOICES[0]}

    # The answer for INV-1 does not approve INV-2: the rerun asks again, for INV-2.
    second = _build(tmp_path, paid, [])(_answer(ask_one.id, "approve"))
    assert second.stop_reason == "interrupt" and paid == []
    (ask_two,) = second.interrupts
    assert ask_two.reason == {"invoice": INVOICES[1]} and ask_two.id != ask_one.id

    agent = _build(tmp_path, paid, ["Paid INV-1, declined INV-2."])
    final = agent(_answer(ask_two.id, "decline"))
    assert final.stop_reason == "end_turn"
    assert paid == [("INV-1", "approve")]  # each paid (or not) once, with its own answer
    result = agent.messages[2]["content"][0]["toolResult"]
    assert result["content"] == [{"text": "INV-1: approve, INV-2: decline"}]
    assert not agent.interrupts.active


def test_ids_are_deterministic_and_depend_on_ordinal_and_reason() -> None:
    from elsai.interrupt import Interrupt

    make = Interrupt.for_tool
    assert make("t", "n", {"a": 1, "b": 2}).id == make("t", "n", {"b": 2, "a": 1}).id
    ids = {
        make("t", "n", {"a": 1}).id,
        make("t", "n", {"a": 2}).id,
        make("t", "n", {"a": 1}, ordinal=1).id,
        make("t", "m", {"a": 1}).id,
        make("u", "n", {"a": 1}).id,
        make("t", "n", {"a": 1}, source="hook").id,
    }
    assert len(ids) == 6


def test_a_hook_asking_twice_gets_two_interrupts() -> None:
    ran: list[str] = []

    @tool
    def deploy(env: str) -> str:
        """Deploy."""
        ran.append(env)
        return f"deployed to {env}"

    def gate(event: BeforeToolCallEvent) -> None:
        owner = event.interrupt("approve", {"who": "owner"})
        security = event.interrupt("approve", {"who": "security"})
        if (owner, security) != ("yes", "yes"):
            event.cancel_tool = "rejected"

    call = {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": "d", "name": "deploy", "input": {"env": "prod"}}}],
    }
    agent = Agent(model=ScriptedModel([call, "ok"]), tools=[deploy])
    agent.hooks.add_callback(BeforeToolCallEvent, gate)
    (owner,) = agent("ship it").interrupts
    (security,) = agent(_answer(owner.id, "yes")).interrupts
    assert security.reason == {"who": "security"} and ran == []
    assert agent(_answer(security.id, "no")).stop_reason == "end_turn"
    assert ran == []
