"""SlidingWindowConversationManager: keep the most recent `window_size` messages."""

from __future__ import annotations

from elsai.conversation.base import ConversationManager, ConversationView, sanitize_window_start


class SlidingWindowConversationManager(ConversationManager):
    """Keeps the most recent `window_size` messages (the default manager)."""

    def __init__(self, window_size: int = 40) -> None:
        super().__init__()
        if window_size < 2:
            raise ValueError("window_size must be at least 2")
        self.window_size = window_size

    def apply_management(self, agent: ConversationView) -> None:
        """Trim to the window."""
        if len(agent.messages) > self.window_size:
            self._trim(agent, len(agent.messages) - self.window_size)

    async def reduce_context(self, agent: ConversationView, error: Exception) -> None:
        """Drop the older half of the window, or re-raise if nothing is left to drop."""
        # Overflow inside the window: drop half of it (at least two messages).
        drop = max(2, len(agent.messages) // 2)
        if len(agent.messages) - drop < 1:
            raise error
        self._trim(agent, drop)

    def restore_window_start(self, stored_count: int) -> int:
        """Only the last window_size stored messages can be in the window."""
        # Only the last window_size messages can be in the window, whatever count was saved.
        return max(self.removed_message_count, stored_count - self.window_size)

    def _trim(self, agent: ConversationView, count: int) -> None:
        before = len(agent.messages)
        window = sanitize_window_start(agent.messages[count:])
        if not window:
            return
        self.removed_message_count += before - len(window)
        agent.messages[:] = window
