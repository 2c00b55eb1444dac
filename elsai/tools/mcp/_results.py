"""MCP `CallToolResult` → Converse `toolResult`.

Text stays text; structured content becomes one `json` block when the text blocks only repeat
it (the spec asks servers to send both); images become Converse image blocks with raw bytes
(sessions store bytes as base64); `isError` becomes `status: "error"` so the model sees it.
Kinds Converse has no block for (audio, binary resources, links) become a short text note.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from elsai.types import ToolResult

IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}


def to_tool_result(tool_use_id: str, result: Any) -> ToolResult:
    """Map one MCP call result (an `mcp.types.CallToolResult`) to a Converse toolResult."""
    blocks = [_block(item) for item in result.content or []]
    structured = result.structured_content
    if structured is not None and _only_repeats(blocks, structured):
        blocks = [b for b in blocks if "text" not in b]
        blocks.insert(0, {"json": structured})
    if not blocks:
        blocks = [{"text": "(no content)"}]
    status = "error" if result.is_error else "success"
    return {"toolUseId": tool_use_id, "status": status, "content": blocks}  # type: ignore[typeddict-item]


def _only_repeats(blocks: list[dict[str, Any]], structured: Any) -> bool:
    """True when every text block is the JSON form of `structured` (or there is no text)."""
    for block in blocks:
        if "text" not in block:
            continue
        try:
            if json.loads(block["text"]) != structured:
                return False
        except ValueError:
            return False
    return True


def _block(item: Any) -> dict[str, Any]:
    kind = getattr(item, "type", None)
    if kind == "text":
        return {"text": item.text}
    if kind == "image":
        fmt = IMAGE_FORMATS.get(item.mime_type)
        if fmt is not None:
            try:
                return {"image": {"format": fmt, "source": {"bytes": base64.b64decode(item.data)}}}
            except (binascii.Error, ValueError):
                return {"text": f"[image with undecodable data ({item.mime_type})]"}
        return {"text": f"[image of unsupported type {item.mime_type}]"}
    if kind == "resource":
        resource = item.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return {"text": text}
        return {
            "text": f"[binary resource {resource.uri} ({resource.mime_type or 'unknown type'})]"
        }
    if kind == "resource_link":
        return {"text": f"[resource link {item.uri}]"}
    if kind == "audio":
        return {"text": f"[audio ({item.mime_type}) not shown]"}
    return {"text": f"[unsupported MCP content of type {kind!r}]"}
