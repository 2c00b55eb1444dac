"""AgentResult: what one invocation produced, and what it acted on.

These are values the loop produces; they live at the bottom so hooks (AfterInvocationEvent),
the loop and the agent can all name them without importing one another.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from elsai.types.messages import Message, StopReason, Usage, empty_usage, text_of
from elsai.types.resume import Position


@dataclass
class InvocationMetrics:
    """Counters for one invocation (a resumed invocation counts only its own work)."""

    cycles: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    tool_counts: dict[str, int] = field(default_factory=dict)
    usage: Usage = field(default_factory=empty_usage)
    model_latency_ms: int = 0
    latency_ms: float = 0.0

    def add_usage(self, usage: Usage) -> None:
        """Add one model call's token counts (optional cache counters included)."""
        for key in (
            "inputTokens",
            "outputTokens",
            "totalTokens",
            "cacheReadInputTokens",
            "cacheWriteInputTokens",
        ):
            if key in usage:
                self.usage[key] = self.usage.get(key, 0) + usage[key]

    def count_tool(self, name: str, error: bool) -> None:
        """Count one finished tool call, per tool and in total."""
        self.tool_calls += 1
        self.tool_counts[name] = self.tool_counts.get(name, 0) + 1
        if error:
            self.tool_errors += 1

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy (for logs, CLI output and serverless payloads)."""
        return {
            "cycles": self.cycles,
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "tool_errors": self.tool_errors,
            "tool_counts": dict(self.tool_counts),
            "usage": dict(self.usage),
            "model_latency_ms": self.model_latency_ms,
            "latency_ms": round(self.latency_ms, 3),
        }


@dataclass
class AgentResult:
    """The outcome of one invocation; `str(result)` is the final message's text."""

    message: Message | None
    stop_reason: StopReason
    metrics: InvocationMetrics = field(default_factory=InvocationMetrics)
    structured_output: Any = None
    #: True only if this invocation acted on an active checkpoint bookmark.
    resumed_from_checkpoint: bool = False
    resume_position: Position | None = None
    interrupts: list[Any] = field(default_factory=list)

    @property
    def text(self) -> str:
        """All text of the final message."""
        return text_of(self.message)

    def __str__(self) -> str:
        return self.text
