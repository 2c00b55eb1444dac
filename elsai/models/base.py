"""The provider interface: one async stream of typed events per model call.

Every provider (Bedrock, scripted, others) yields the same small event vocabulary; the loop
assembles it into a Converse message with `assemble`. Non-streaming providers simply yield
the events of a complete response.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from elsai.types import Message, StopReason, ToolChoice, ToolSpec, Usage, empty_usage


@dataclass(frozen=True)
class TextDelta:
    """A piece of assistant text for content block `index`."""

    text: str
    index: int = 0


@dataclass(frozen=True)
class ToolUseStart:
    """A tool call begins in content block `index`; its input follows as `ToolInputDelta`s."""

    index: int
    tool_use_id: str
    name: str


@dataclass(frozen=True)
class ToolInputDelta:
    """A fragment of the JSON text of a tool's input (fragments concatenate)."""

    index: int
    fragment: str


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the model's reasoning (or its signature) for content block `index`."""

    index: int
    text: str = ""
    signature: str | None = None


@dataclass(frozen=True)
class BlockStop:
    """Content block `index` is complete."""

    index: int


@dataclass(frozen=True)
class ModelStop:
    """Last event of every call."""

    stop_reason: StopReason
    usage: Usage = field(default_factory=empty_usage)
    latency_ms: int = 0


ModelEvent = TextDelta | ToolUseStart | ToolInputDelta | ReasoningDelta | BlockStop | ModelStop


@dataclass(frozen=True)
class ModelRequest:
    """Everything a provider needs for one call. Providers must not mutate `messages`."""

    messages: Sequence[Message]
    tool_specs: Sequence[ToolSpec] = ()
    system_prompt: str | None = None
    tool_choice: ToolChoice | None = None


class Model(abc.ABC):
    """Base class of model providers."""

    @abc.abstractmethod
    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Yield the events of one model call, ending with exactly one `ModelStop`."""

    @property
    def config(self) -> dict[str, Any]:
        """Provider settings, for display and telemetry."""
        return {}
