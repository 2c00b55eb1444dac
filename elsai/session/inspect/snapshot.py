"""Read a stored session tolerantly: every unreadable file becomes a `Problem`, never a raise.

`elsai.session.inspect.check` judges what this module reads; operators and `elsai sessions show/check`
need the two apart, because showing a broken session must still work.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from elsai.checkpoint.model import SCHEMA_VERSION as CHECKPOINT_SCHEMA_VERSION
from elsai.checkpoint.model import Checkpoint
from elsai.ids import validate_id
from elsai.session.layout import keys
from elsai.session.layout.records import (
    SESSION_SCHEMA_VERSION,
    AgentRecord,
    MessageRecord,
    SessionCorruptError,
    SessionRecord,
    load,
)
from elsai.session.storage.base import StorageBackend
from elsai.types import Message

Severity = Literal["error", "warning"]
_AGENT_FILE = re.compile(
    r"agents/agent_([^/]+)/(agent\.json|checkpoint\.json|lease\.json|messages/message_(0|[1-9]\d*)\.json"
    rf"|{keys.SEGMENT_FILE_PATTERN}"  # segments: derived copies, not messages
    rf"|{keys.RESUME_FILE_PATTERN})"  # resume records: history, never read to resume
)


@dataclass(frozen=True)
class Problem:
    """One finding about one stored file, worded for the person who has to fix it."""

    severity: Severity
    path: str  # storage.describe(key): a file path or s3:// URL a person can open
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.path}: {self.message}"


@dataclass
class AgentSnapshot:
    """One agent as stored. `messages` holds the files that were read and valid."""

    agent_id: str
    indices: list[int] = field(default_factory=list)
    messages: dict[int, MessageRecord] = field(default_factory=dict)
    record: AgentRecord | None = None
    bookmark: Checkpoint | None = None
    unreadable: list[str] = field(default_factory=list)  # keys that failed to parse

    @property
    def contiguous(self) -> bool:
        """Whether the message files are numbered 0..N-1 without a gap (else it cannot load)."""
        return self.indices == list(range(len(self.indices)))

    @property
    def last_message(self) -> Message | None:
        """The newest stored message, if it was readable: what the resume gate looks at."""
        record = self.messages.get(self.indices[-1]) if self.indices else None
        return record.as_message() if record else None

    @property
    def pending_interrupts(self) -> list[dict[str, Any]]:
        """Interrupts waiting for a response, from agent.json (empty if it is unreadable)."""
        return list(self.record.interrupt_state.get("pending", [])) if self.record else []


@dataclass
class SessionSnapshot:
    """A whole session as stored, with the problems met while reading it."""

    session_id: str
    record: SessionRecord | None = None
    agents: dict[str, AgentSnapshot] = field(default_factory=dict)
    multi_agent: Any = None
    problems: list[Problem] = field(default_factory=list)  # found while reading


def load_session(
    storage: StorageBackend,
    session_id: str,
    *,
    agent_id: str | None = None,
    last: int | None = None,
) -> SessionSnapshot | None:
    """Read a session tolerantly (problems are collected, not raised); None if nothing is stored.

    `agent_id` limits reading to one agent; `last` reads only the newest N messages (the gate
    needs only the last one), so showing a long transcript's tail stays cheap.
    """
    validate_id(session_id, "session_id")
    listed = sorted(storage.list(keys.session_dir(session_id)))
    if not listed:
        return None
    snap = SessionSnapshot(session_id)
    read = _Reader(storage, snap.problems)
    _index_listing(snap, read, listed)
    chosen = [a for a in snap.agents.values() if agent_id in (None, a.agent_id)]
    wanted = _wanted_keys(session_id, chosen, last)
    found = {
        k: (obj.data if obj else None)
        for k, obj in zip(wanted, storage.read_many(wanted), strict=True)
    }
    _read_session_files(snap, read, found)
    for agent in chosen:
        _read_agent(read, session_id, agent, found)
    return snap


def _index_listing(snap: SessionSnapshot, read: _Reader, listed: list[str]) -> None:
    """Find the agents and their message numbers in a listing; flag files outside the layout."""
    base, session_key = keys.session_dir(snap.session_id), keys.session_key(snap.session_id)
    for key in listed:
        rel = key[len(base) :]
        if rel in ("session.json", "multi_agent.json") or rel.endswith("/"):
            continue
        match = _AGENT_FILE.fullmatch(rel)
        if match is None or not _valid_id(match.group(1)):
            read.problem(key, "unknown file in the session layout")
            continue
        agent = snap.agents.setdefault(match.group(1), AgentSnapshot(match.group(1)))
        if match.group(3) is not None:
            agent.indices = sorted([*agent.indices, int(match.group(3))])
    if session_key not in listed:
        read.problem(session_key, "session.json is missing (the session has files but no record)")


def _wanted_keys(session_id: str, chosen: list[AgentSnapshot], last: int | None) -> list[str]:
    """Every key to read in one batch: session files, then each chosen agent's files."""
    wanted = [keys.session_key(session_id), keys.multi_agent_key(session_id)]
    for agent in chosen:
        shown = agent.indices if last is None else agent.indices[-max(last, 1) :]
        wanted += [
            keys.agent_key(session_id, agent.agent_id),
            keys.checkpoint_key(session_id, agent.agent_id),
        ]
        wanted += [keys.message_key(session_id, agent.agent_id, i) for i in shown]
    return wanted


def _read_session_files(
    snap: SessionSnapshot, read: _Reader, found: dict[str, bytes | None]
) -> None:
    """Parse session.json and multi_agent.json from the batch read."""
    session_id = snap.session_id
    session_key, multi_key = keys.session_key(session_id), keys.multi_agent_key(session_id)
    snap.record = read.record(SessionRecord, session_key, found[session_key])
    if snap.record and snap.record.session_id != session_id:
        read.problem(session_key, f"session_id is {snap.record.session_id!r}, not {session_id!r}")
    multi = found[multi_key]
    snap.multi_agent = read.json(multi_key, multi) if multi is not None else None


def _read_agent(
    read: _Reader, session_id: str, agent: AgentSnapshot, found: dict[str, bytes | None]
) -> None:
    """Parse one agent's agent.json, bookmark and the messages that were asked for."""
    aid = agent.agent_id
    agent_key, bookmark_key = keys.agent_key(session_id, aid), keys.checkpoint_key(session_id, aid)
    if found[agent_key] is None:
        read.problem(
            agent_key, "agent.json is missing (the SDK rewrites it on the next load)", "warning"
        )
    agent.record = read.record(AgentRecord, agent_key, found[agent_key])
    if agent.record and agent.record.agent_id != aid:
        read.problem(
            agent_key, f"agent_id is {agent.record.agent_id!r} but the directory is agent_{aid}"
        )
    agent.bookmark = read.bookmark(bookmark_key, found[bookmark_key])
    for index in agent.indices:
        key = keys.message_key(session_id, aid, index)
        if key in found:  # else not asked for (`last`); None: deleted since the listing
            record = read.message(index, key, found[key])
            if record is not None:
                agent.messages[index] = record
    agent.unreadable = [k for k in read.failed if k.startswith(keys.agent_dir(session_id, aid))]


# -- parsing: each failure becomes one Problem naming the file ---------------------------------


def read_message(
    storage: StorageBackend, index: int, key: str, data: bytes | None
) -> tuple[MessageRecord | None, list[Problem]]:
    """One stored message judged by `load_session`'s rules: its record (None if unusable).

    With the problems found, so a reader of one page of messages reports what the check does.
    """
    problems: list[Problem] = []
    return _Reader(storage, problems).message(index, key, data), problems


def _valid_id(value: str) -> bool:
    try:
        validate_id(value)
    except ValueError:
        return False
    return True


def _explain(exc: BaseException) -> str:
    cause = exc.__cause__ if isinstance(exc.__cause__, ValidationError) else exc
    if isinstance(cause, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in cause.errors()
        )
    return str(cause)


@dataclass
class _Reader:
    storage: StorageBackend
    problems: list[Problem]
    failed: list[str] = field(default_factory=list)  # keys present but unusable

    def problem(self, key: str, message: str, severity: Severity = "error") -> None:
        self.problems.append(Problem(severity, self.storage.describe(key), message))

    def fail(self, key: str, message: str) -> None:
        self.problem(key, message)
        self.failed.append(key)

    def json(self, key: str, data: bytes) -> Any:
        try:
            return json.loads(data)
        except ValueError as exc:
            self.fail(key, f"corrupt JSON: {exc}")
            return None

    def _versioned(self, key: str, data: bytes | None, expected: str) -> Any:
        raw = None if data is None else self.json(key, data)
        version = raw.get("schema_version", expected) if isinstance(raw, dict) else expected
        if version != expected:
            self.fail(key, f"unknown schema_version {version!r} (this SDK reads {expected!r})")
            return None
        return raw

    def record(self, cls: type[Any], key: str, data: bytes | None) -> Any:
        if data is None or self._versioned(key, data, SESSION_SCHEMA_VERSION) is None:
            return None
        try:
            return load(cls, data, self.storage.describe(key))
        except SessionCorruptError as exc:
            self.fail(key, f"does not match the {cls.__name__} schema: {_explain(exc)}")
            return None

    def bookmark(self, key: str, data: bytes | None) -> Checkpoint | None:
        raw = self._versioned(key, data, CHECKPOINT_SCHEMA_VERSION)
        if raw is None:
            return None
        try:
            return Checkpoint.model_validate(raw)
        except ValidationError as exc:
            self.fail(key, f"invalid checkpoint: {_explain(exc)}")
            return None

    def message(self, index: int, key: str, data: bytes | None) -> MessageRecord | None:
        record: MessageRecord | None = self.record(MessageRecord, key, data)
        if record is None:
            if data is None:
                self.fail(key, "deleted while the session was being read")
            return None
        message = record.message
        if record.message_id != index:
            self.problem(
                key, f"message_id is {record.message_id} but the file is message_{index}.json"
            )
        content = message.get("content")
        if message.get("role") not in ("user", "assistant"):
            self.fail(key, f"role is {message.get('role')!r}, not 'user' or 'assistant'")
        elif not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
            self.fail(key, "content is not a list of content blocks")
        else:
            return record
        return None
