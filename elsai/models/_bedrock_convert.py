"""Converse shapes for `BedrockModel`: cleaned requests in, elsai model events out.

Kept apart from the provider so the client, retry and error code reads on its own; nothing
here does I/O. Streamed (`converse_stream`) and complete (`converse`) replies both become the
same event sequence, so the loop cannot tell which API answered.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from botocore import exceptions as boto_errors

from elsai.models.base import (
    BlockStop,
    ModelEvent,
    ModelStop,
    ReasoningDelta,
    TextDelta,
    ToolInputDelta,
    ToolUseStart,
)
from elsai.types import Message, StopReason, Usage, empty_usage

_STREAM_ERRORS = {
    "internalServerException",
    "modelStreamErrorException",
    "throttlingException",
    "validationException",
    "serviceUnavailableException",
}
_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "guardrail_intervened",
    "content_filtered": "content_filtered",
    # The reply was cut short by the context window: to the loop this is a truncated reply.
    "model_context_window_exceeded": "max_tokens",
}

# Keys Bedrock accepts; anything else (elsai bookkeeping, other providers' fields) is dropped
# because Converse rejects unknown members outright.
_BLOCK_KEYS = frozenset(
    {
        "text",
        "image",
        "document",
        "video",
        "audio",
        "toolUse",
        "toolResult",
        "guardContent",
        "cachePoint",
        "reasoningContent",
        "citationsContent",
        "searchResult",
    }
)
_TOOL_USE_KEYS = frozenset({"toolUseId", "name", "input", "type"})
_TOOL_RESULT_KEYS = frozenset({"toolUseId", "content", "status", "type"})
_TOOL_RESULT_CONTENT_KEYS = frozenset(
    {"json", "text", "image", "document", "video", "searchResult"}
)


class StreamParser:
    """Maps ConverseStream events to elsai events and collects the stop reason and usage."""

    def __init__(self) -> None:
        self.stop_reason: StopReason = "end_turn"
        self.usage: Usage = empty_usage()
        self.latency_ms = 0

    def feed(self, raw: Mapping[str, Any]) -> list[ModelEvent]:
        for key in _STREAM_ERRORS.intersection(raw):
            body = raw[key] or {}
            error: dict[str, Any] = {
                "Error": {"Code": key, "Message": str(body.get("message", ""))}
            }
            raise boto_errors.EventStreamError(cast(Any, error), "ConverseStream")
        if "contentBlockStart" in raw:
            start = raw["contentBlockStart"]
            use = start.get("start", {}).get("toolUse")
            if use:
                return [ToolUseStart(start["contentBlockIndex"], use["toolUseId"], use["name"])]
        elif "contentBlockDelta" in raw:
            return _delta_events(raw["contentBlockDelta"])
        elif "contentBlockStop" in raw:
            return [BlockStop(raw["contentBlockStop"]["contentBlockIndex"])]
        elif "messageStop" in raw:
            self.stop_reason = _stop_reason(raw["messageStop"].get("stopReason"))
        elif "metadata" in raw:
            meta = raw["metadata"]
            self.usage = _usage(meta.get("usage"))
            self.latency_ms = int(meta.get("metrics", {}).get("latencyMs", 0))
        return []

    def stop(self) -> ModelStop:
        return ModelStop(stop_reason=self.stop_reason, usage=self.usage, latency_ms=self.latency_ms)


def _delta_events(block: Mapping[str, Any]) -> list[ModelEvent]:
    index = block["contentBlockIndex"]
    delta = block.get("delta", {})
    if "text" in delta:
        return [TextDelta(text=delta["text"], index=index)]
    if "toolUse" in delta:
        return [ToolInputDelta(index=index, fragment=delta["toolUse"].get("input", ""))]
    reasoning = delta.get("reasoningContent")
    if reasoning:
        events: list[ModelEvent] = []
        if "text" in reasoning:
            events.append(ReasoningDelta(index=index, text=reasoning["text"]))
        if "signature" in reasoning:
            events.append(ReasoningDelta(index=index, signature=reasoning["signature"]))
        return events
    return []


def response_events(response: Mapping[str, Any]) -> list[ModelEvent]:
    """The events of a complete `converse` response, as if it had been streamed."""
    events: list[ModelEvent] = []
    content = response.get("output", {}).get("message", {}).get("content", [])
    for index, block in enumerate(content):
        if "text" in block:
            events.append(TextDelta(text=block["text"], index=index))
        elif "toolUse" in block:
            use = block["toolUse"]
            events.append(ToolUseStart(index, use["toolUseId"], use["name"]))
            events.append(ToolInputDelta(index, json.dumps(use.get("input", {}))))
        elif "reasoningContent" in block:
            text = block["reasoningContent"].get("reasoningText")
            if text is None:
                continue  # redacted reasoning has no elsai event yet
            events.append(ReasoningDelta(index, text.get("text", ""), text.get("signature")))
        else:
            continue
        events.append(BlockStop(index))
    latency = int(response.get("metrics", {}).get("latencyMs", 0))
    stop = _stop_reason(response.get("stopReason"))
    events.append(
        ModelStop(stop_reason=stop, usage=_usage(response.get("usage")), latency_ms=latency)
    )
    return events


def _stop_reason(raw: str | None) -> StopReason:
    if raw is None:
        return "end_turn"
    return _STOP_REASONS.get(raw, cast(StopReason, raw))


def _usage(raw: Mapping[str, Any] | None) -> Usage:
    usage = empty_usage()
    if not raw:
        return usage
    usage["inputTokens"] = int(raw.get("inputTokens", 0))
    usage["outputTokens"] = int(raw.get("outputTokens", 0))
    usage["totalTokens"] = int(raw.get("totalTokens", usage["inputTokens"] + usage["outputTokens"]))
    if "cacheReadInputTokens" in raw:
        usage["cacheReadInputTokens"] = int(raw["cacheReadInputTokens"])
    if "cacheWriteInputTokens" in raw:
        usage["cacheWriteInputTokens"] = int(raw["cacheWriteInputTokens"])
    return usage


def clean_message(message: Message) -> dict[str, Any]:
    """A copy of `message` holding only what Converse accepts (the original is not touched)."""
    blocks = [_clean_block(b) for b in message["content"]]
    blocks = [b for b in blocks if b]
    # Converse rejects blank text blocks; drop them unless nothing else would be left.
    kept = [b for b in blocks if not ("text" in b and not str(b["text"]).strip())]
    return {"role": message["role"], "content": kept or blocks}


def _clean_block(block: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in block.items() if k in _BLOCK_KEYS}
    if "toolUse" in out:
        out["toolUse"] = {k: v for k, v in out["toolUse"].items() if k in _TOOL_USE_KEYS}
    if "toolResult" in out:
        result = {k: v for k, v in out["toolResult"].items() if k in _TOOL_RESULT_KEYS}
        items = result.get("content", [])
        cleaned = ({k: v for k, v in c.items() if k in _TOOL_RESULT_CONTENT_KEYS} for c in items)
        result["content"] = [c for c in cleaned if c]
        out["toolResult"] = result
    return out
