"""NullConversationManager: keep everything; overflow is the caller's problem."""

from __future__ import annotations

from elsai.conversation.base import ConversationManager, ConversationView


class NullConversationManager(ConversationManager):
    """Keeps every message; a context overflow is raised to the caller."""

    def apply_management(self, agent: ConversationView) -> None:
        """Nothing to trim."""
        return None

    async def reduce_context(self, agent: ConversationView, error: Exception) -> None:
        """Re-raise `error`: this manager never shrinks the conversation."""
        raise error
