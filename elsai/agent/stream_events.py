"""Old import path of the stream events; they live in `elsai.loop.events`."""

from elsai.loop.events import (
    MessageAddedStreamEvent,
    ModelCallStartEvent,
    ReasoningDeltaEvent,
    ResultEvent,
    ResumeEvent,
    StreamEvent,
    TextDeltaEvent,
    ToolEndEvent,
    ToolInputDeltaEvent,
    ToolStartEvent,
)

__all__ = [
    "MessageAddedStreamEvent",
    "ModelCallStartEvent",
    "ReasoningDeltaEvent",
    "ResultEvent",
    "ResumeEvent",
    "StreamEvent",
    "TextDeltaEvent",
    "ToolEndEvent",
    "ToolInputDeltaEvent",
    "ToolStartEvent",
]
