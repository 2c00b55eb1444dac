"""Conversation managers keep the in-memory window the model sees within bounds.

They change only `agent.messages` (what is sent to the model). The session store keeps the
full history; `removed_message_count` tells the session which stored messages the window no
longer holds, so a restore loads just the window while message numbering continues.
"""

from __future__ import annotations

import abc
from typing import Any, Protocol

from elsai.models.base import Model
from elsai.types import AgentView, ContentBlock, Message, ToolSpec


class ConversationView(AgentView, Protocol):
    """What a conversation manager sees of the agent: the AgentView plus what a summary needs."""

    @property
    def model(self) -> Model:
        """The agent's model (a summarizer may reuse it)."""
        ...

    def tool_specs_for_history(self) -> list[ToolSpec]:
        """Tool specs to send with a history that contains tool calls."""
        ...


class ConversationManager(abc.ABC):
    """Decides which part of the stored history the model sees (edits `agent.messages`)."""

    def __init__(self) -> None:
        self._removed_message_count = 0

    @property
    def removed_message_count(self) -> int:
        """Stored messages (from the start of history) no longer in `agent.messages`."""
        return self._removed_message_count

    @removed_message_count.setter
    def removed_message_count(self, count: int) -> None:
        # A property, so subclasses that add to it do not redeclare it (type checkers
        # would see each subclass's own, unannotated attribute).
        self._removed_message_count = count

    @abc.abstractmethod
    def apply_management(self, agent: ConversationView) -> None:
        """Called after each cycle: trim proactively if the manager wants to."""

    @abc.abstractmethod
    async def reduce_context(self, agent: ConversationView, error: Exception) -> None:
        """Called on context-window overflow; must shrink `agent.messages` or re-raise `error`."""

    def get_state(self) -> dict[str, Any]:
        """What must be persisted (agent.json) to restore the same window later."""
        return {"type": type(self).__name__, "removed_message_count": self.removed_message_count}

    def restore_window_start(self, stored_count: int) -> int:
        """Index of the first stored message a restore must load."""
        return self.removed_message_count

    def restore(self, state: dict[str, Any] | None) -> list[Message]:
        """Load persisted state; returns synthetic messages to put before the stored window.

        Raises:
            ValueError: The state is not one this manager wrote (the session layer reports it
                as a corrupt agent.json).
        """
        count = (state or {}).get("removed_message_count", 0)
        if type(count) is not int or count < 0:  # bool is no count; agent.json is untrusted
            raise ValueError(f"removed_message_count must be a count, not {count!r:.60}")
        self.removed_message_count = count
        return []


def sanitize_window_start(messages: list[Message]) -> list[Message]:
    """Make a trimmed window a valid Converse conversation start.

    The first message must be a user message and must not answer a toolUse the window no
    longer holds; such toolResult blocks become plain text (in memory only).
    """
    while messages and messages[0]["role"] != "user":
        messages = messages[1:]
    if messages and any("toolResult" in b for b in messages[0]["content"]):
        content: list[ContentBlock] = []
        for block in messages[0]["content"]:
            if "toolResult" in block:
                texts = [
                    c.get("text") or str(c.get("json", "")) for c in block["toolResult"]["content"]
                ]
                content.append(
                    {"text": f"[result of an earlier tool call: {' '.join(texts)[:500]}]"}
                )
            else:
                content.append(block)
        messages = [{"role": "user", "content": content}, *messages[1:]]
    return messages
