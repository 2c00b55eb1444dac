"""Conversation managers: what part of the history the model sees."""

from typing import TYPE_CHECKING, Any

from elsai.conversation.base import ConversationManager
from elsai.conversation.null import NullConversationManager
from elsai.conversation.sliding_window import SlidingWindowConversationManager

if TYPE_CHECKING:
    from elsai.conversation.summarizing import SummarizingConversationManager


def __getattr__(name: str) -> Any:
    """`SummarizingConversationManager` on first use, so the default agent never loads it."""
    if name == "SummarizingConversationManager":
        from elsai.conversation.summarizing import SummarizingConversationManager

        return SummarizingConversationManager
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ConversationManager",
    "NullConversationManager",
    "SlidingWindowConversationManager",
    "SummarizingConversationManager",
]
