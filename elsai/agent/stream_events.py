"""Typed events yielded by `Agent.stream_async`. The last one is always `ResultEvent`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from elsai.types import Message, ToolResult, ToolUse

if TYPE_CHECKING:
    from elsai.agent.result import AgentResult, ResumePosition


@dataclass(frozen=True)
class StreamEvent:
    pass


@dataclass(frozen=True)
class TextDeltaEvent(StreamEvent):
    text: str


@dataclass(frozen=True)
class ReasoningDeltaEvent(StreamEvent):
    text: str


@dataclass(frozen=True)
class ToolInputDeltaEvent(StreamEvent):
    tool_use_id: str
    name: str
    fragment: str


@dataclass(frozen=True)
class ModelCallStartEvent(StreamEvent):
    cycle_index: int


@dataclass(frozen=True)
class ToolStartEvent(StreamEvent):
    tool_use: ToolUse


@dataclass(frozen=True)
class ToolEndEvent(StreamEvent):
    tool_use: ToolUse
    result: ToolResult


@dataclass(frozen=True)
class MessageAddedStreamEvent(StreamEvent):
    message: Message


@dataclass(frozen=True)
class ResumeEvent(StreamEvent):
    """This invocation is acting on an active checkpoint bookmark."""

    position: ResumePosition
    pending_tools: int


@dataclass(frozen=True)
class ResultEvent(StreamEvent):
    result: AgentResult
