"""Conversation managers: what part of the history the model sees."""

from elsai.conversation.base import ConversationManager
from elsai.conversation.null import NullConversationManager
from elsai.conversation.sliding_window import SlidingWindowConversationManager
from elsai.conversation.summarizing import SummarizingConversationManager

__all__ = [
    "ConversationManager",
    "NullConversationManager",
    "SlidingWindowConversationManager",
    "SummarizingConversationManager",
]
