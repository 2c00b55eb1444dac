"""Validate a stored session: layout, schemas and the transcript invariants of design.md.

A library, so tests and operators can assert a store is sound; `elsai sessions check` is only
a shell around it. It only reads, so it is safe beside a live writer (which may briefly show a
count mismatch mid-boundary). What the next invoke would do is decided by the SDK's own resume
gate (`elsai.checkpoint.gate.gate_denial`), so this report can never drift from the loop's behaviour.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from elsai.checkpoint.gate import gate_denial as checkpoint_gate
from elsai.checkpoint.model import SCHEMA_VERSION as CHECKPOINT_SCHEMA_VERSION
from elsai.checkpoint.model import Checkpoint
from elsai.session import keys
from elsai.session.records import (
    SESSION_SCHEMA_VERSION,
    AgentRecord,
    MessageRecord,
    SessionCorruptError,
    SessionRecord,
    load,
)
from elsai.session.storage.base import StorageBackend
from elsai.types import Message, tool_results, tool_uses

Severity = Literal["error", "warning"]
Action = Literal[
    "resume_after_model",
    "resume_after_tools",
    "interrupt_responses",
    "messages_only",
    "cannot_load",
]
_AGENT_FILE = re.compile(
    r"agents/agent_([^/]+)/(agent\.json|checkpoint\.json|lease\.json|messages/message_(0|[1-9]\d*)\.json)"
)


@dataclass(frozen=True)
class Problem:
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
        return self.indices == list(range(len(self.indices)))

    @property
    def last_message(self) -> Message | None:
        record = self.messages.get(self.indices[-1]) if self.indices else None
        return record.as_message() if record else None

    @property
    def pending_interrupts(self) -> list[dict[str, Any]]:
        return list(self.record.interrupt_state.get("pending", [])) if self.record else []


@dataclass
class SessionSnapshot:
    session_id: str
    record: SessionRecord | None = None
    agents: dict[str, AgentSnapshot] = field(default_factory=dict)
    multi_agent: Any = None
    problems: list[Problem] = field(default_factory=list)  # found while reading


@dataclass(frozen=True)
class NextInvoke:
    """What rebuilding the agent (same ids, with a CheckpointConfig) and invoking it would do."""

    action: Action
    summary: str
    pending_tools: tuple[str, ...] = ()
    denial: str | None = None


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
    keys.validate_id(session_id, "session_id")
    base, session_key = keys.session_dir(session_id), keys.session_key(session_id)
    listed = sorted(storage.list(base))
    if not listed:
        return None
    snap = SessionSnapshot(session_id)
    read = _Reader(storage, snap.problems)
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

    chosen = [a for a in snap.agents.values() if agent_id in (None, a.agent_id)]
    wanted = [session_key, keys.multi_agent_key(session_id)]
    for agent in chosen:
        shown = agent.indices if last is None else agent.indices[-max(last, 1) :]
        wanted += [
            keys.agent_key(session_id, agent.agent_id),
            keys.checkpoint_key(session_id, agent.agent_id),
        ]
        wanted += [keys.message_key(session_id, agent.agent_id, i) for i in shown]
    found = {
        k: (obj.data if obj else None)
        for k, obj in zip(wanted, storage.read_many(wanted), strict=True)
    }

    snap.record = read.record(SessionRecord, session_key, found[session_key])
    if snap.record and snap.record.session_id != session_id:
        read.problem(session_key, f"session_id is {snap.record.session_id!r}, not {session_id!r}")
    multi = found[keys.multi_agent_key(session_id)]
    snap.multi_agent = (
        read.json(keys.multi_agent_key(session_id), multi) if multi is not None else None
    )
    for agent in chosen:
        aid = agent.agent_id
        agent_key, bookmark_key = (
            keys.agent_key(session_id, aid),
            keys.checkpoint_key(session_id, aid),
        )
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
    return snap


def check_session(storage: StorageBackend, session_id: str) -> list[Problem]:
    """Every problem in the session; an empty list means it is sound."""
    snap = load_session(storage, session_id)
    if snap is None:
        return [Problem("error", storage.describe(keys.session_key(session_id)), "no such session")]
    return check_snapshot(storage, snap)


def check_snapshot(storage: StorageBackend, snap: SessionSnapshot) -> list[Problem]:
    """Problems of a snapshot read in full (`load_session` without `agent_id` or `last`)."""
    problems = list(snap.problems)
    for agent in snap.agents.values():
        problems += check_agent(storage, snap.session_id, agent)
    return problems


def check_agent(storage: StorageBackend, session_id: str, agent: AgentSnapshot) -> list[Problem]:
    """Numbering, transcript shape and bookmark consistency of one (fully read) agent."""
    aid, out = agent.agent_id, []

    def file(index: int) -> str:
        return storage.describe(keys.message_key(session_id, aid, index))

    def error(path: str, message: str) -> None:
        out.append(Problem("error", path, message))

    if not agent.contiguous:
        missing = sorted(set(range(agent.indices[-1] + 1)) - set(agent.indices))
        names = ", ".join(f"message_{i}.json" for i in missing[:5]) + (
            " ..." if len(missing) > 5 else ""
        )
        error(
            file(missing[0]),
            f"gap in message numbering: missing {names}; the agent cannot be loaded",
        )
    msgs = agent.messages
    decision = next_invoke(agent)
    if agent.indices and agent.indices[0] == 0 and 0 in msgs and msgs[0].message["role"] != "user":
        error(file(0), "the transcript starts with an assistant message")
    for i in agent.indices:
        current = msgs.get(i)
        if current is None:
            continue
        message, before = current.message, msgs.get(i - 1)
        if before is not None and before.message["role"] == message["role"]:
            error(
                file(i),
                f"roles do not alternate: message_{i - 1} and message_{i} are both {message['role']}",
            )
        asked = {u["toolUseId"] for u in tool_uses(before.as_message())} if before else set()
        for result in tool_results(current.as_message()) if before is not None or i == 0 else []:
            if result["toolUseId"] not in asked:
                error(
                    file(i),
                    f"toolResult {result['toolUseId']} answers no toolUse of the message before it",
                )
        uses = tool_uses(current.as_message())
        if not uses:
            continue
        after = msgs.get(i + 1)
        if after is not None:
            answered = {r["toolUseId"] for r in tool_results(after.as_message())}
            for use in uses:
                if use["toolUseId"] not in answered:
                    error(
                        file(i),
                        f"orphan toolUse {use['toolUseId']} ({use['name']}): message_{i + 1} has no toolResult for it",
                    )
        elif i == agent.indices[-1] and decision.action not in (
            "resume_after_model",
            "interrupt_responses",
            "cannot_load",
        ):
            ids = ", ".join(f"{u['toolUseId']} ({u['name']})" for u in uses)
            why = "no toolResult follows and no active after_model bookmark covers it"
            error(
                file(i),
                f"orphan toolUse {ids}: {why} (the next invoke answers it with an 'interrupted' error, not re-run)",
            )
    out += _bookmark_problems(storage, session_id, agent)
    last = agent.last_message
    if agent.pending_interrupts and not (last and last["role"] == "assistant" and tool_uses(last)):
        why = "interrupt_state has pending interrupts but the last message is not an assistant toolUse"
        out.append(Problem("warning", storage.describe(keys.agent_key(session_id, aid)), why))
    return out


def _bookmark_problems(
    storage: StorageBackend, session_id: str, agent: AgentSnapshot
) -> list[Problem]:
    bookmark, stored = agent.bookmark, len(agent.indices)
    if bookmark is None or not agent.contiguous or (stored and agent.last_message is None):
        return []  # nothing to compare against, or the cause is already reported
    path = storage.describe(keys.checkpoint_key(session_id, agent.agent_id))
    count = bookmark.message_count
    if bookmark.agent_id != agent.agent_id:
        problem = f"bookmark agent_id is {bookmark.agent_id!r} but the directory is agent_{agent.agent_id}"
    elif not bookmark.is_active:
        problem = (
            f"completed bookmark counts {count} messages but only {stored} are stored"
            if count > stored
            else ""
        )
    elif count != stored:
        problem = f"active bookmark has message_count={count} but {stored} messages are stored (the resume gate will deny it)"
    else:
        denial = gate_denial(agent, bookmark)
        problem = f"active bookmark does not match the transcript: {denial}" if denial else ""
    return [Problem("error", path, problem)] if problem else []


def gate_denial(agent: AgentSnapshot, bookmark: Checkpoint) -> str | None:
    """Why the resume gate would refuse `bookmark`: the SDK's own rule, not a copy."""
    return checkpoint_gate(bookmark, agent.agent_id, len(agent.indices), agent.last_message)


def next_invoke(agent: AgentSnapshot) -> NextInvoke:
    """Mirror of `SessionBinding.begin_invocation` for a stored agent."""
    if not agent.contiguous:
        return NextInvoke("cannot_load", "cannot load: gaps in message numbering")
    if agent.unreadable:
        return NextInvoke(
            "cannot_load", f"cannot load: {agent.unreadable[0].rsplit('/', 1)[-1]} is unreadable"
        )
    pending = agent.pending_interrupts
    if pending:
        asked = f"{len(pending)} interrupt response(s) ({', '.join(str(p.get('name')) for p in pending)})"
        return NextInvoke(
            "interrupt_responses", f"awaiting {asked}: invoke with interruptResponse blocks"
        )
    last, bookmark = agent.last_message, agent.bookmark
    trailing = tool_uses(last) if last and last["role"] == "assistant" else []
    names = tuple(u["name"] for u in trailing)
    denial = None
    if bookmark is None:
        reason = "no bookmark"
    elif not bookmark.is_active:
        reason = "bookmark completed"
    else:
        denial = gate_denial(agent, bookmark)
        if denial is None and bookmark.position == "after_model":
            n = len(names)
            return NextInvoke(
                "resume_after_model",
                f"resume after_model: {n} pending tool{'s' if n != 1 else ''} ({', '.join(names)}) "
                f"run{'s' if n == 1 else ''} first, then the new input is applied",
                names,
            )
        if denial is None:
            return NextInvoke(
                "resume_after_tools",
                "resume after_tools: the new input is appended and the loop continues",
            )
        reason = f"gate would deny: {denial}"
    summary = f"messages-only continue ({reason})"
    if names:
        summary += f"; {len(names)} unanswered tool call(s) ({', '.join(names)}) get an 'interrupted' error, not re-run"
    return NextInvoke("messages_only", summary, names, denial)


# -- parsing: each failure becomes one Problem naming the file ---------------------------------


def _valid_id(value: str) -> bool:
    try:
        keys.validate_id(value)
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
