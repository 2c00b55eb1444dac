"""The storage layout, in one place. Backends only move bytes under these keys.

session_<session_id>/
  session.json
  multi_agent.json                 # Graph/Swarm orchestrator cursor
  agents/
    agent_<agent_id>/
      agent.json
      checkpoint.json
      lease.json                   # ownership lease of the live writer (elsai.session.write.lease)
      messages/
        message_<N>.json
      segments/                      # derived read accelerator (elsai.session.read.segments)
        segment_<a>_<b>.json         # immutable copy of messages [a, b); never trusted over them
      resumes/                       # one create-only record per resume from a bookmark
        resume_<utc stamp>_<hex>.json
"""

from __future__ import annotations

import re

_MESSAGE_RE = re.compile(r"message_(\d+)\.json$")
_SEGMENT_RE = re.compile(r"segments/segment_(\d+)_(\d+)\.json$")
#: A segment file relative to its agent folder (for layout checks that list a session).
SEGMENT_FILE_PATTERN = r"segments/segment_(?:0|[1-9]\d*)_[1-9]\d*\.json"
#: A resume record relative to its agent folder: sortable UTC stamp, then a random tag.
RESUME_FILE_PATTERN = r"resumes/resume_\d{8}T\d{12}Z_[0-9a-f]{8}\.json"


def session_dir(session_id: str) -> str:
    """The folder of one session."""
    return f"session_{session_id}/"


def session_key(session_id: str) -> str:
    """session.json of a session."""
    return f"session_{session_id}/session.json"


def multi_agent_key(session_id: str) -> str:
    """The Graph/Swarm orchestrator cursor of a session."""
    return f"session_{session_id}/multi_agent.json"


def agents_prefix(session_id: str) -> str:
    """The folder holding every agent of a session."""
    return f"session_{session_id}/agents/"


def agent_dir(session_id: str, agent_id: str) -> str:
    """The folder of one agent in a session."""
    return f"session_{session_id}/agents/agent_{agent_id}/"


def agent_key(session_id: str, agent_id: str) -> str:
    """agent.json: state, window and interrupt state of one agent."""
    return agent_dir(session_id, agent_id) + "agent.json"


def checkpoint_key(session_id: str, agent_id: str) -> str:
    """checkpoint.json: the loop bookmark of one agent."""
    return agent_dir(session_id, agent_id) + "checkpoint.json"


def lease_key(session_id: str, agent_id: str) -> str:
    """The agent's ownership lease, beside checkpoint.json (which keeps only the spec's fields)."""
    return agent_dir(session_id, agent_id) + "lease.json"


def messages_prefix(session_id: str, agent_id: str) -> str:
    """The folder of one agent's message files."""
    return agent_dir(session_id, agent_id) + "messages/"


def message_key(session_id: str, agent_id: str, index: int) -> str:
    """The file of message number `index`."""
    return f"{messages_prefix(session_id, agent_id)}message_{index}.json"


def segments_prefix(session_id: str, agent_id: str) -> str:
    """The folder of one agent's derived message segments."""
    return agent_dir(session_id, agent_id) + "segments/"


def segment_key(session_id: str, agent_id: str, start: int, end: int) -> str:
    """The segment holding copies of messages [start, end)."""
    return f"{segments_prefix(session_id, agent_id)}segment_{start}_{end}.json"


def resumes_prefix(session_id: str, agent_id: str) -> str:
    """The folder of one agent's resume records (checkpoint.json keeps only the spec's fields)."""
    return agent_dir(session_id, agent_id) + "resumes/"


def resume_key(session_id: str, agent_id: str, stamp: str, tag: str) -> str:
    """One resume record: `stamp` is ``YYYYmmddTHHMMSSffffffZ`` (names sort by time)."""
    return f"{resumes_prefix(session_id, agent_id)}resume_{stamp}_{tag}.json"


def segment_range(key: str) -> tuple[int, int] | None:
    """The [start, end) of `.../segment_<start>_<end>.json`, or None for any other key."""
    match = _SEGMENT_RE.search(key)
    return (int(match.group(1)), int(match.group(2))) if match else None


def message_index(key: str) -> int | None:
    """The N of `.../message_<N>.json`, or None for any other key."""
    match = _MESSAGE_RE.search(key)
    return int(match.group(1)) if match else None
