"""NullConversationManager: keep everything; overflow is the caller's problem."""

from __future__ import annotations

from typing import TYPE_CHECKING

from elsai.conversation.base import ConversationManager

if TYPE_CHECKING:
    from elsai.agent.agent import Agent


class NullConversationManager(ConversationManager):
    def apply_management(self, agent: Agent) -> None:
        return None

    async def reduce_context(self, agent: Agent, error: Exception) -> None:
        raise error
