"""Message shapes shared by every part of elsai.

Messages use the Amazon Bedrock Converse shape: it is what the default provider speaks and
what every other provider converts to and from. They are plain dicts (JSON-ready, cheap to
persist); the TypedDicts below document and type-check them.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

Role = Literal["user", "assistant"]
StopReason = Literal[
    "end_turn",
    "tool_use",
    "max_tokens",
    "stop_sequence",
    "content_filtered",
    "guardrail_intervened",
    "interrupt",
    "paused",
]
ToolResultStatus = Literal["success", "error"]


class ToolUse(TypedDict):
    """A model's request to call one tool."""

    toolUseId: str
    name: str
    input: Any


class ToolResultContent(TypedDict, total=False):
    """One piece of a tool's answer: text or JSON."""

    text: str
    json: Any


class ToolResult(TypedDict):
    """A tool's answer to one ToolUse, matched by toolUseId."""

    toolUseId: str
    status: ToolResultStatus
    content: list[ToolResultContent]


class ContentBlock(TypedDict, total=False):
    """One block of a message; exactly one key is set."""

    text: str
    toolUse: ToolUse
    toolResult: ToolResult
    image: dict[str, Any]
    document: dict[str, Any]
    reasoningContent: dict[str, Any]


class Message(TypedDict):
    """One conversation turn in the Converse shape."""

    role: Role
    content: list[ContentBlock]


class ToolSpec(TypedDict):
    """How a tool is described to the model."""

    name: str
    description: str
    inputSchema: dict[str, Any]  # {"json": <JSON schema>}


class ToolChoice(TypedDict, total=False):
    """Which tool (if any) the model must call next."""

    auto: dict[str, Any]
    any: dict[str, Any]
    tool: dict[str, str]


class Usage(TypedDict):
    """Token counts reported by a provider."""

    inputTokens: int
    outputTokens: int
    totalTokens: int
    cacheReadInputTokens: NotRequired[int]
    cacheWriteInputTokens: NotRequired[int]


def empty_usage() -> Usage:
    """Zeroed counters, the start of every sum."""
    return {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}


def text_of(message: Message | None) -> str:
    """All text blocks of a message joined: what `str(result)` shows."""
    if not message:
        return ""
    return "\n".join(b["text"] for b in message.get("content", []) if "text" in b)


def tool_uses(message: Message | None) -> list[ToolUse]:
    """The toolUse blocks of a message (what the loop must run)."""
    if not message:
        return []
    return [b["toolUse"] for b in message.get("content", []) if "toolUse" in b]


def tool_results(message: Message | None) -> list[ToolResult]:
    """The toolResult blocks of a message."""
    if not message:
        return []
    return [b["toolResult"] for b in message.get("content", []) if "toolResult" in b]
