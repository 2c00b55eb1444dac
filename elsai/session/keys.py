"""The storage layout, in one place. Backends only move bytes under these keys.

session_<session_id>/
  session.json
  multi_agent.json                 # Graph/Swarm orchestrator cursor
  agents/
    agent_<agent_id>/
      agent.json
      checkpoint.json
      messages/
        message_<N>.json
"""

from __future__ import annotations

import re

MAX_ID_LENGTH = 128
_MESSAGE_RE = re.compile(r"message_(\d+)\.json$")


def validate_id(value: object, kind: str = "id") -> str:
    """Reject ids that could escape the layout or confuse it, before any I/O happens."""
    if not isinstance(value, str):
        raise ValueError(f"{kind} must be a string, got {type(value).__name__}")
    if not value:
        raise ValueError(f"{kind} must not be empty")
    if len(value) > MAX_ID_LENGTH:
        raise ValueError(f"{kind} is {len(value)} characters long; the limit is {MAX_ID_LENGTH}")
    if "/" in value or "\\" in value:
        raise ValueError(f"{kind} {value!r} must not contain path separators")
    if value in (".", "..") or ".." in value:
        raise ValueError(f"{kind} {value!r} must not contain '..'")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError(f"{kind} {value!r} must not contain control characters")
    return value


def session_dir(session_id: str) -> str:
    return f"session_{session_id}/"


def session_key(session_id: str) -> str:
    return f"session_{session_id}/session.json"


def multi_agent_key(session_id: str) -> str:
    return f"session_{session_id}/multi_agent.json"


def agents_prefix(session_id: str) -> str:
    return f"session_{session_id}/agents/"


def agent_dir(session_id: str, agent_id: str) -> str:
    return f"session_{session_id}/agents/agent_{agent_id}/"


def agent_key(session_id: str, agent_id: str) -> str:
    return agent_dir(session_id, agent_id) + "agent.json"


def checkpoint_key(session_id: str, agent_id: str) -> str:
    return agent_dir(session_id, agent_id) + "checkpoint.json"


def messages_prefix(session_id: str, agent_id: str) -> str:
    return agent_dir(session_id, agent_id) + "messages/"


def message_key(session_id: str, agent_id: str, index: int) -> str:
    return f"{messages_prefix(session_id, agent_id)}message_{index}.json"


def message_index(key: str) -> int | None:
    """The N of `.../message_<N>.json`, or None for any other key."""
    match = _MESSAGE_RE.search(key)
    return int(match.group(1)) if match else None


# -- serverless runtime (jobs driven by Step Functions) ---------------------------------------


def job_token_key(job_id: str) -> str:
    """Where a job waiting for interrupt responses parks its Step Functions task token."""
    return f"jobs/{job_id}/task_token.json"


def job_cancel_key(job_id: str) -> str:
    """Where the jobs API records that a client cancelled a job (Step Functions only says ABORTED)."""
    return f"jobs/{job_id}/cancelled.json"
