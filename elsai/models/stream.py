"""Assembles provider events into a Converse assistant message."""

from __future__ import annotations

import json
from typing import Any

from elsai.models.base import (
    BlockStop,
    ModelEvent,
    ModelStop,
    ReasoningDelta,
    TextDelta,
    ToolInputDelta,
    ToolUseStart,
)
from elsai.types import ContentBlock, Message, StopReason, Usage, empty_usage


class _Block:
    """One content block being assembled (a plain class: cheaper to define than a dataclass)."""

    __slots__ = ("kind", "name", "signature", "text", "tool_use_id")

    def __init__(self, kind: str, tool_use_id: str = "", name: str = "") -> None:
        self.kind = kind  # "text" | "toolUse" | "reasoning"
        self.text: list[str] = []
        self.tool_use_id = tool_use_id
        self.name = name
        self.signature: str | None = None


class MessageAssembler:
    """Feed events in order; `message()` returns the finished assistant message."""

    def __init__(self) -> None:
        self._blocks: dict[int, _Block] = {}
        self.stop_reason: StopReason | None = None
        self.usage: Usage = empty_usage()
        self.latency_ms: int = 0

    def feed(self, event: ModelEvent) -> None:
        """Add the next event of the stream to the message being built."""
        if isinstance(event, TextDelta):
            self._blocks.setdefault(event.index, _Block("text")).text.append(event.text)
        elif isinstance(event, ToolUseStart):
            self._blocks[event.index] = _Block(
                "toolUse", tool_use_id=event.tool_use_id, name=event.name
            )
        elif isinstance(event, ToolInputDelta):
            self._blocks.setdefault(event.index, _Block("toolUse")).text.append(event.fragment)
        elif isinstance(event, ReasoningDelta):
            block = self._blocks.setdefault(event.index, _Block("reasoning"))
            block.text.append(event.text)
            if event.signature:
                block.signature = event.signature
        elif isinstance(event, ModelStop):
            self.stop_reason = event.stop_reason
            self.usage = event.usage
            self.latency_ms = event.latency_ms
        elif isinstance(event, BlockStop):
            pass

    def message(self) -> Message:
        """The assistant message the fed events describe, in content-block order."""
        content: list[ContentBlock] = []
        for index in sorted(self._blocks):
            block = self._blocks[index]
            raw = "".join(block.text)
            if block.kind == "text":
                if raw:
                    content.append({"text": raw})
            elif block.kind == "toolUse":
                content.append(
                    {
                        "toolUse": {
                            "toolUseId": block.tool_use_id,
                            "name": block.name,
                            "input": _parse_input(raw),
                        }
                    }
                )
            else:
                reasoning: dict[str, Any] = {"text": raw}
                if block.signature:
                    reasoning["signature"] = block.signature
                content.append({"reasoningContent": {"reasoningText": reasoning}})
        return {"role": "assistant", "content": content}


def _parse_input(raw: str) -> Any:
    """Tool input JSON; unparseable input is kept as a string so the tool reports it."""
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except json.JSONDecodeError:
        return raw
