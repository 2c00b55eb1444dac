"""Converse -> Anthropic Messages API: the request half of `AnthropicModel`.

Pure conversion, no SDK and no I/O, so the provider module keeps to the client, the stream
and the error mapping. Blocks the Messages API cannot take (elsai bookkeeping, Converse-only
kinds) are dropped; media it cannot take raise a clear `ModelError` before any call is made.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any, cast

from elsai.errors import ModelError
from elsai.models._sdk import IMAGE_MEDIA_TYPES, media_bytes
from elsai.types import Message, ToolChoice, ToolSpec

_TEXT_DOCUMENTS = {"txt", "md", "csv", "html"}


def convert_messages(messages: Any) -> list[dict[str, Any]]:
    """Converse messages as Messages API messages (messages left empty are dropped)."""
    out: list[dict[str, Any]] = []
    for message in cast(list[Message], messages):
        content = _content(message["content"])
        if message["role"] == "user":
            # Anthropic wants the answers to the previous turn's tool calls first.
            content.sort(key=lambda b: b["type"] != "tool_result")
        if content:
            out.append({"role": message["role"], "content": content})
    return out


def _content(blocks: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in blocks:
        if "cachePoint" in block:
            if out:  # a Converse cache point marks the end of the block before it
                out[-1]["cache_control"] = {"type": "ephemeral"}
            continue
        converted = _block(block)
        if converted is not None:
            out.append(converted)
    return out


def _block(block: Mapping[str, Any]) -> dict[str, Any] | None:
    if "text" in block:
        # The API rejects blank text blocks.
        return {"type": "text", "text": block["text"]} if str(block["text"]).strip() else None
    if "toolUse" in block:
        use = block["toolUse"]
        # Input the model garbled is kept as a string by the assembler; the API wants an object.
        tool_input = use.get("input")
        return {
            "type": "tool_use",
            "id": use["toolUseId"],
            "name": use["name"],
            "input": tool_input if isinstance(tool_input, dict) else {},
        }
    if "toolResult" in block:
        return _tool_result(block["toolResult"])
    if "image" in block:
        return _image(block["image"])
    if "document" in block:
        return _document(block["document"])
    if "reasoningContent" in block:
        return _reasoning(block["reasoningContent"])
    return None  # elsai bookkeeping or Converse-only blocks the Messages API cannot take


def _tool_result(result: Mapping[str, Any]) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for item in result.get("content", []):
        if "text" in item:
            content.append({"type": "text", "text": item["text"]})
        elif "json" in item:
            content.append({"type": "text", "text": json.dumps(item["json"])})
        elif "image" in item:
            content.append(_image(item["image"]))
        elif "document" in item:
            content.append(_document(item["document"]))
    out: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": result["toolUseId"],
        "content": content,
    }
    if result.get("status") == "error":
        out["is_error"] = True
    return out


def _image(image: Mapping[str, Any]) -> dict[str, Any]:
    fmt = str(image.get("format", "")).lower()
    if fmt not in IMAGE_MEDIA_TYPES:
        raise ModelError(f"AnthropicModel cannot send images of format {fmt!r}")
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": IMAGE_MEDIA_TYPES[fmt], "data": _b64(image)},
    }


def _document(document: Mapping[str, Any]) -> dict[str, Any]:
    fmt = str(document.get("format", "")).lower()
    if fmt == "pdf":
        source = {"type": "base64", "media_type": "application/pdf", "data": _b64(document)}
    elif fmt in _TEXT_DOCUMENTS:
        text = media_bytes(document).decode("utf-8", "replace")
        source = {"type": "text", "media_type": "text/plain", "data": text}
    else:
        raise ModelError(f"AnthropicModel cannot send documents of format {fmt!r}")
    out: dict[str, Any] = {"type": "document", "source": source}
    if document.get("name"):
        out["title"] = document["name"]
    return out


def _reasoning(reasoning: Mapping[str, Any]) -> dict[str, Any] | None:
    text = reasoning.get("reasoningText") or {}
    # Thinking is only accepted back with the signature that proves it came from Claude.
    if text.get("signature"):
        thinking = text.get("text", "")
        return {"type": "thinking", "thinking": thinking, "signature": text["signature"]}
    return None


def _b64(media: Mapping[str, Any]) -> str:
    return base64.b64encode(media_bytes(media)).decode("ascii")


def convert_tool(spec: ToolSpec) -> dict[str, Any]:
    """A Converse tool spec as a Messages API tool definition."""
    return {
        "name": spec["name"],
        "description": spec["description"],
        "input_schema": spec["inputSchema"]["json"],
    }


def convert_tool_choice(choice: ToolChoice) -> dict[str, Any]:
    """A Converse tool choice as the Messages API `tool_choice`."""
    if "tool" in choice:
        return {"type": "tool", "name": choice["tool"]["name"]}
    if "any" in choice:
        return {"type": "any"}
    return {"type": "auto"}
