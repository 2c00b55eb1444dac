"""Read-only views of a stored session (for the jobs API and the `elsai` command).

Reads only; never repairs or rewrites anything, so it is safe to run beside a live writer.
"""

from __future__ import annotations

import json
from typing import Any

from elsai.ids import validate_id
from elsai.session.layout import keys
from elsai.session.storage.base import StorageBackend
from elsai.types import text_of, tool_results, tool_uses

SNIPPET = 200


def summarize_session(storage: StorageBackend, session_id: str) -> dict[str, Any] | None:
    """Agents, message counts, last message and bookmark; None if the session does not exist."""
    validate_id(session_id, "session_id")
    session = storage.read(keys.session_key(session_id))
    if session is None:
        return None
    prefix = keys.agents_prefix(session_id)
    agent_ids = sorted(
        {k[len(prefix) :].split("/", 1)[0].removeprefix("agent_") for k in storage.list(prefix)}
    )
    agents = [summarize_agent(storage, session_id, agent_id) for agent_id in agent_ids]
    out: dict[str, Any] = {
        "session_id": session_id,
        "session": json.loads(session.data),
        "agents": agents,
    }
    multi = storage.read(keys.multi_agent_key(session_id))
    if multi is not None:
        out["multi_agent"] = json.loads(multi.data)
    return out


def summarize_agent(storage: StorageBackend, session_id: str, agent_id: str) -> dict[str, Any]:
    """What is stored for one agent: message count, last message and bookmark, for the CLI."""
    message_keys = storage.list(keys.messages_prefix(session_id, agent_id))
    indices = sorted(i for i in (keys.message_index(k) for k in message_keys) if i is not None)
    bookmark_obj = storage.read(keys.checkpoint_key(session_id, agent_id))
    bookmark = json.loads(bookmark_obj.data) if bookmark_obj else None
    last: dict[str, Any] | None = None
    if indices:
        obj = storage.read(keys.message_key(session_id, agent_id, indices[-1]))
        if obj is not None:
            message = json.loads(obj.data)["message"]
            last = {
                "index": indices[-1],
                "role": message["role"],
                "text": text_of(message)[:SNIPPET],
                "tool_uses": [u["name"] for u in tool_uses(message)],
                "tool_results": len(tool_results(message)),
            }
    return {
        "agent_id": agent_id,
        "message_count": len(indices),
        "last_message": last,
        "checkpoint": bookmark,
        "next_invoke": _next_invoke(bookmark, len(indices), last),
    }


def _next_invoke(bookmark: dict[str, Any] | None, count: int, last: dict[str, Any] | None) -> str:
    """What a rebuilt agent with a checkpoint config would do on its next invoke."""
    if not bookmark or bookmark.get("execution_status") != "active":
        return "messages-only continue"
    if bookmark.get("message_count") != count:
        return f"messages-only continue (gate deny: bookmark message_count={bookmark.get('message_count')}, stored={count})"
    position = bookmark.get("position")
    if position == "after_model" and last and last["role"] == "assistant" and last["tool_uses"]:
        return f"resume after_model: run {len(last['tool_uses'])} pending tool(s) first"
    if position == "after_tools" and last and last["role"] == "user" and last["tool_results"]:
        return "resume after_tools: append input and continue the loop"
    return "messages-only continue (gate deny: pending-tool shape does not match the bookmark)"
