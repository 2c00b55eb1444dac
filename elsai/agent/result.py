"""AgentResult: what one invocation produced, and what it acted on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from elsai.types import Message, StopReason, Usage, empty_usage, text_of

ResumePosition = Literal["after_model", "after_tools"]


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
        self.tool_calls += 1
        self.tool_counts[name] = self.tool_counts.get(name, 0) + 1
        if error:
            self.tool_errors += 1

    def to_dict(self) -> dict[str, Any]:
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
    message: Message | None
    stop_reason: StopReason
    metrics: InvocationMetrics = field(default_factory=InvocationMetrics)
    structured_output: Any = None
    #: True only if this invocation acted on an active checkpoint bookmark.
    resumed_from_checkpoint: bool = False
    resume_position: ResumePosition | None = None
    interrupts: list[Any] = field(default_factory=list)

    @property
    def text(self) -> str:
        return text_of(self.message)

    def __str__(self) -> str:
        return self.text
