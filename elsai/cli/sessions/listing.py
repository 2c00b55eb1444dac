"""One `elsai sessions ls` entry, built from the same snapshot `show` and `check` read.

`ls` used to summarise sessions with a lighter reader of its own, and predicted "resume" for
bookmarks the SDK refuses (a misspelt position, a foreign schema_version or agent_id). Now
every command reads through `elsai.session.inspect.check.load_session` and asks `next_invoke`, the
mirror of the resume gate, so the three commands cannot disagree.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from elsai.cli.render import iso
from elsai.session.inspect.check import AgentSnapshot, SessionSnapshot, load_session, next_invoke
from elsai.session.layout import keys
from elsai.session.storage.base import StorageBackend
from elsai.types import text_of, tool_results, tool_uses

SNIPPET = 200


def ls_entry(storage: StorageBackend, session_id: str, files: dict[str, float]) -> dict[str, Any]:
    """Agents, counts, bookmark and next invoke of one session, with update times."""
    updated = max(files.values())
    base: dict[str, Any] = {"session_id": session_id, "updated_at": iso(updated)}
    base["updated_ts"] = updated
    try:
        snap = load_session(storage, session_id, last=1)
    except ValueError as exc:  # an id outside the layout
        return {**base, "error": f"unreadable ({exc}); run `elsai sessions check {session_id}`"}
    if snap is None or snap.record is None:
        return {**base, "error": "session.json is missing or unreadable"}
    agents = [_agent(session_id, a, files) for a in snap.agents.values()]
    agents.sort(key=lambda a: a["updated_at"] or "", reverse=True)
    entry: dict[str, Any] = {**base, "session": snap.record.model_dump(), "agents": agents}
    if snap.multi_agent is not None:
        entry["multi_agent"] = snap.multi_agent
    if snap.problems:
        entry["problems"] = len(snap.problems)
    return entry


def _agent(session_id: str, agent: AgentSnapshot, files: dict[str, float]) -> dict[str, Any]:
    prefix = keys.agent_dir(session_id, agent.agent_id)
    unreadable = any(k.endswith("/checkpoint.json") for k in agent.unreadable)
    checkpoint: Any = agent.bookmark.model_dump() if agent.bookmark else None
    return {
        "agent_id": agent.agent_id,
        "message_count": len(agent.indices),
        "last_message": _last(agent),
        "checkpoint": "unreadable" if unreadable else checkpoint,
        "next_invoke": next_invoke(agent).summary,
        "interrupts_pending": len(agent.pending_interrupts),
        "updated_at": iso(max((t for k, t in files.items() if k.startswith(prefix)), default=None)),
    }


def _last(agent: AgentSnapshot) -> dict[str, Any] | None:
    message = agent.last_message
    if message is None:
        return None
    return {
        "index": agent.indices[-1],
        "role": message["role"],
        "text": text_of(message)[:SNIPPET],
        "tool_uses": [u["name"] for u in tool_uses(message)],
        "tool_results": len(tool_results(message)),
    }


def only_agent(snap: SessionSnapshot, agent_id: str) -> SessionSnapshot:
    """`check --agent`: that agent's files and the session-level ones, nobody else's."""
    marker = f"/agents/agent_{agent_id}/"
    problems = [p for p in snap.problems if "/agents/agent_" not in p.path or marker in p.path]
    return dataclasses.replace(snap, agents={agent_id: snap.agents[agent_id]}, problems=problems)
