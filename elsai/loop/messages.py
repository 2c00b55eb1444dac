"""Small pure helpers that keep a transcript a valid Converse conversation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from elsai.types import ContentBlock, Message

INTERRUPTED_TOOL_TEXT = (
    "The tool call was interrupted (the process stopped before it finished) and was not re-run."
)


def user_content_from_prompt(prompt: Any) -> list[ContentBlock]:
    """Normalise what users pass to `agent(...)` into user content blocks."""
    if prompt is None:
        return []
    if isinstance(prompt, str):
        return [{"text": prompt}]
    if isinstance(prompt, list):
        blocks: list[ContentBlock] = []
        for item in prompt:
            if (
                isinstance(item, dict)
                and item.get("role") == "user"
                and isinstance(item.get("content"), list)
            ):
                blocks.extend(item["content"])
            elif isinstance(item, dict) and item and "role" not in item:
                blocks.append(item)  # type: ignore[arg-type]
            else:
                raise TypeError(
                    f"prompt list items must be content blocks or user messages, got {item!r}"
                )
        return blocks
    raise TypeError(
        f"prompt must be a str, a list of content blocks or None, got {type(prompt).__name__}"
    )


def append_user_content(message: Message, content: Sequence[ContentBlock]) -> Message:
    """A copy of user `message` with `content` added (Converse forbids two user turns in a row)."""
    return {"role": "user", "content": [*message["content"], *content]}


def strip_incomplete_tool_uses(message: Message) -> Message:
    """Drop toolUse blocks from a message the model did not finish as a tool call.

    A `max_tokens` stop can cut a tool call short; keeping it would leave a toolUse that
    nothing answers.
    """
    if not any("toolUse" in b for b in message["content"]):
        return message
    content = [b for b in message["content"] if "toolUse" not in b] or [
        {"text": "(response truncated)"}
    ]
    return {"role": "assistant", "content": content}


def orphan_repair(message: Message) -> Message:
    """The user message answering every toolUse of `message` with an 'interrupted' error."""
    content: list[ContentBlock] = [
        {
            "toolResult": {
                "toolUseId": b["toolUse"]["toolUseId"],
                "status": "error",
                "content": [{"text": INTERRUPTED_TOOL_TEXT}],
            }
        }
        for b in message["content"]
        if "toolUse" in b
    ]
    return {"role": "user", "content": content}
