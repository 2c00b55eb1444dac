"""Small shared helpers for the agent-core tests (imported as a plain module)."""

from __future__ import annotations

from typing import Any

from elsai.types import Message


def tool_use(use_id: str, name: str, inp: dict[str, Any] | Any) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": use_id, "name": name, "input": inp}}


def assistant(*blocks: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    content = ([{"text": text}] if text is not None else []) + list(blocks)
    return {"role": "assistant", "content": content}


def results_of(message: Message) -> list[dict[str, Any]]:
    return [b["toolResult"] for b in message["content"] if "toolResult" in b]


def uses_of(message: Message) -> list[dict[str, Any]]:
    return [b["toolUse"] for b in message["content"] if "toolUse" in b]


def last_request_results(model: Any) -> list[dict[str, Any]]:
    """toolResults in the last user message of the most recent recorded request."""
    return results_of(model.requests[-1].last_message)


def text_of_result(result: dict[str, Any]) -> str:
    return " ".join(str(c.get("text", c.get("json", ""))) for c in result["content"])
