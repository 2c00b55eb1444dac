"""The graph on its own, offline: triage, an MCP lookup, a wait for approval, the refund."""

from __future__ import annotations

from pathlib import Path

from support_desk.main import build

from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.session import FileSessionManager


def _graph(store: Path) -> object:
    config = AgentConfig(
        agent_id="desk",
        session_manager=FileSessionManager(session_id="ticket-1", storage_dir=str(store)),
        checkpoint=CheckpointConfig(position="both"),
    )
    return build(config)


def test_a_damaged_order_is_refunded_after_approval(tmp_path: Path) -> None:
    """The resolver asks before refunding; a rebuilt graph resumes with the answer."""
    first = _graph(tmp_path)("My kettle from order 1001 arrived broken, refund please")  # type: ignore[operator]
    assert first.status == "interrupted" and first.interrupted_nodes == ["resolver"]
    [ask] = first.interrupts
    assert ask.name == "approve_refund" and ask.reason == {"order_id": "1001", "amount": 49}
    answer = {"interruptResponse": {"interruptId": ask.id, "response": {"approved": True}}}
    done = _graph(tmp_path)([answer])  # type: ignore[operator]
    assert done.status == "completed"
    assert done.text == "Resolved: refunded 49 for order 1001"
