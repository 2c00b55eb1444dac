"""The resume gate: may an active bookmark be acted on, given what is stored?

A pure function of the bookmark and the stored transcript's tail, shared by the session
binding (which acts on it) and by `elsai sessions check/show` (which predict it).
"""

from __future__ import annotations

from elsai.checkpoint.model import Checkpoint
from elsai.types import Message, tool_results, tool_uses


def gate_denial(
    bookmark: Checkpoint, agent_id: str, stored_count: int, last_message: Message | None
) -> str | None:
    """Why `bookmark` must not be acted on, or None if it may."""
    if bookmark.agent_id != agent_id:
        return f"bookmark was written by agent {bookmark.agent_id!r}"
    if bookmark.message_count != stored_count:
        return f"bookmark message_count={bookmark.message_count} but {stored_count} messages are stored"
    last = last_message
    if bookmark.position == "after_model":
        if last is None or last["role"] != "assistant" or not tool_uses(last):
            return "after_model bookmark but the last stored message is not a pending assistant toolUse"
    elif last is None or last["role"] != "user" or not tool_results(last):
        return "after_tools bookmark but the last stored message is not a user toolResult message"
    return None
