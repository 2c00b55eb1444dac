"""Converse-shaped requests as OpenAI chat-completions JSON (messages, tools, tool choice)."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

from elsai.errors import ModelError
from elsai.models._sdk import IMAGE_MEDIA_TYPES, media_bytes
from elsai.types import Message, ToolChoice, ToolSpec


def convert_messages(message: Message) -> list[dict[str, Any]]:
    """One Converse message as chat messages (a user turn with tool results becomes several)."""
    blocks: Sequence[Mapping[str, Any]] = message["content"]
    if message["role"] == "assistant":
        return [_assistant(blocks)]
    out: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if "toolResult" in block:
            tool_message, images = _tool_result(block["toolResult"])
            out.append(tool_message)
            parts.extend(images)  # tool messages carry text only; images follow as the user's
        elif "text" in block:
            parts.append({"type": "text", "text": block["text"]})
        elif "image" in block:
            parts.append(_image(block["image"]))
        elif "document" in block:
            raise ModelError("OpenAIModel cannot send documents")
    if parts:
        only_text = len(parts) == 1 and parts[0]["type"] == "text"
        # A plain string is what every compatible server understands.
        out.append({"role": "user", "content": parts[0]["text"] if only_text else parts})
    return out


def _assistant(blocks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    texts = [b["text"] for b in blocks if "text" in b and b["text"]]
    calls = [
        {
            "id": use["toolUseId"],
            "type": "function",
            "function": {"name": use["name"], "arguments": _arguments(use.get("input"))},
        }
        for use in (b["toolUse"] for b in blocks if "toolUse" in b)
    ]
    # A string even beside tool calls: OpenAI also takes null there, llama.cpp's server only "".
    out: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts)}
    if calls:
        out["tool_calls"] = calls
    return out


def _arguments(tool_input: Any) -> str:
    # Input the model garbled is kept as a string by the assembler: send it back verbatim.
    if isinstance(tool_input, str):
        return tool_input
    return json.dumps(tool_input if tool_input is not None else {})


def _tool_result(result: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for item in result.get("content", []):
        if "text" in item:
            texts.append(item["text"])
        elif "json" in item:
            texts.append(json.dumps(item["json"]))
        elif "image" in item:
            images.append(_image(item["image"]))
    message = {"role": "tool", "tool_call_id": result["toolUseId"], "content": "\n".join(texts)}
    return message, images


def _image(image: Mapping[str, Any]) -> dict[str, Any]:
    fmt = str(image.get("format", "")).lower()
    if fmt not in IMAGE_MEDIA_TYPES:
        raise ModelError(f"OpenAIModel cannot send images of format {fmt!r}")
    encoded = base64.b64encode(media_bytes(image)).decode("ascii")
    url = f"data:{IMAGE_MEDIA_TYPES[fmt]};base64,{encoded}"
    return {"type": "image_url", "image_url": {"url": url}}


def convert_tool(spec: ToolSpec) -> dict[str, Any]:
    """A Converse tool spec as a chat-completions function tool."""
    return {
        "type": "function",
        "function": {
            "name": spec["name"],
            "description": spec["description"],
            "parameters": spec["inputSchema"]["json"],
        },
    }


def convert_tool_choice(choice: ToolChoice) -> Any:
    """A Converse tool choice as `tool_choice`: "auto", "required" or one named function."""
    if "tool" in choice:
        return {"type": "function", "function": {"name": choice["tool"]["name"]}}
    if "any" in choice:
        return "required"
    return "auto"
