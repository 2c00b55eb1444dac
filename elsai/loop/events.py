"""Typed events yielded by `Agent.stream_async`. The last one is always `ResultEvent`.

The loop produces them, so they live in the loop package.
"""

from __future__ import annotations

from dataclasses import dataclass

from elsai.types import AgentResult, Message, Position, ToolResult, ToolUse


@dataclass(frozen=True)
class StreamEvent:
    """Base of every streamed event (match on the subclass)."""


@dataclass(frozen=True)
class TextDeltaEvent(StreamEvent):
    """A piece of the model's answer text, as it arrives."""

    text: str


@dataclass(frozen=True)
class ReasoningDeltaEvent(StreamEvent):
    """A piece of the model's reasoning text, as it arrives."""

    text: str


@dataclass(frozen=True)
class ToolInputDeltaEvent(StreamEvent):
    """A fragment of a tool call's JSON input, as it arrives."""

    tool_use_id: str
    name: str
    fragment: str


@dataclass(frozen=True)
class ModelCallStartEvent(StreamEvent):
    """A model call begins (cycle `cycle_index`)."""

    cycle_index: int


@dataclass(frozen=True)
class ToolStartEvent(StreamEvent):
    """A tool call starts."""

    tool_use: ToolUse


@dataclass(frozen=True)
class ToolEndEvent(StreamEvent):
    """A tool call finished with `result`."""

    tool_use: ToolUse
    result: ToolResult


@dataclass(frozen=True)
class MessageAddedStreamEvent(StreamEvent):
    """A message joined the conversation (and its store, if any)."""

    message: Message


@dataclass(frozen=True)
class ResumeEvent(StreamEvent):
    """This invocation is acting on an active checkpoint bookmark."""

    position: Position
    pending_tools: int


@dataclass(frozen=True)
class ResultEvent(StreamEvent):
    """The invocation's result; always the last event."""

    result: AgentResult
