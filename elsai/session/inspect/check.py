"""Validate a stored session: layout, schemas and the transcript invariants of design.md.

A library, so tests and operators can assert a store is sound; `elsai sessions check` is only
a shell around it. It only reads, so it is safe beside a live writer (which may briefly show a
count mismatch mid-boundary). What the next invoke would do is decided by the SDK's own resume
gate (`elsai.checkpoint.gate.gate_denial`), so this report can never drift from the loop's behaviour.
Reading (tolerant: problems are collected, not raised) lives in `elsai.session.inspect.snapshot`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from elsai.checkpoint.gate import gate_denial as checkpoint_gate
from elsai.checkpoint.model import Checkpoint
from elsai.session.inspect.snapshot import (
    AgentSnapshot,
    Problem,
    SessionSnapshot,
    Severity,
    load_session,
)
from elsai.session.layout import keys
from elsai.session.layout.records import MessageRecord, decode_value
from elsai.session.read.segments import SegmentInvalid, parse
from elsai.session.storage.base import StorageBackend
from elsai.types import ToolUse, tool_results, tool_uses

__all__ = [
    "Action",
    "AgentSnapshot",
    "NextInvoke",
    "Problem",
    "SessionSnapshot",
    "Severity",
    "check_agent",
    "check_session",
    "check_snapshot",
    "gate_denial",
    "load_session",
    "next_invoke",
]

Action = Literal[
    "resume_after_model",
    "resume_after_tools",
    "interrupt_responses",
    "messages_only",
    "cannot_load",
]
# With one of these decisions, a trailing toolUse is not an orphan: it runs, waits or cannot load.
_TRAILING_USE_COVERED = ("resume_after_model", "interrupt_responses", "cannot_load")


@dataclass(frozen=True)
class NextInvoke:
    """What rebuilding the agent (same ids, with a CheckpointConfig) and invoking it would do."""

    action: Action
    summary: str
    pending_tools: tuple[str, ...] = ()
    denial: str | None = None


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
    out = _numbering_problems(storage, session_id, agent)
    decision = next_invoke(agent)
    for i in agent.indices:
        current = agent.messages.get(i)
        if current is not None:
            path = storage.describe(keys.message_key(session_id, agent.agent_id, i))
            errors = _message_errors(agent, i, current, decision)
            out += [Problem("error", path, message) for message in errors]
    out += _bookmark_problems(storage, session_id, agent)
    out += _segment_problems(storage, session_id, agent)
    last = agent.last_message
    if agent.pending_interrupts and not (last and last["role"] == "assistant" and tool_uses(last)):
        why = "interrupt_state has pending interrupts but the last message is not an assistant toolUse"
        out.append(
            Problem("warning", storage.describe(keys.agent_key(session_id, agent.agent_id)), why)
        )
    return out


def _segment_problems(
    storage: StorageBackend, session_id: str, agent: AgentSnapshot
) -> list[Problem]:
    """Segments whose copy of a message differs from its file (e.g. the file was edited by hand).

    A resume would be fed the copy, so this is an error; `elsai sessions redact` rewrites a
    message together with its copies, and deleting the segments folder loses nothing.
    """
    out = []
    for key in sorted(storage.list(keys.segments_prefix(session_id, agent.agent_id))):
        span, found = keys.segment_range(key), storage.read(key)
        if span is None or found is None:
            continue
        try:
            records = parse(found.data, *span)
        except SegmentInvalid:
            continue  # a reader ignores it (with a warning) and reads the files
        for index, raw in enumerate(records, start=span[0]):
            stored = agent.messages.get(index)
            if stored is not None and MessageRecord.model_validate(decode_value(raw)) != stored:
                why = (
                    f"its copy of message_{index}.json differs from the file, and a resume reads "
                    "the copy: rewrite that message with `elsai sessions redact`, or delete this "
                    "agent's segments folder"
                )
                out.append(Problem("error", storage.describe(key), why))
                break
    return out


def _numbering_problems(
    storage: StorageBackend, session_id: str, agent: AgentSnapshot
) -> list[Problem]:
    """A gap in the message numbering (the agent cannot load) and a transcript not led by user."""
    out, msgs = [], agent.messages

    def file(index: int) -> str:
        return storage.describe(keys.message_key(session_id, agent.agent_id, index))

    if not agent.contiguous:
        missing = sorted(set(range(agent.indices[-1] + 1)) - set(agent.indices))
        names = ", ".join(f"message_{i}.json" for i in missing[:5]) + (
            " ..." if len(missing) > 5 else ""
        )
        why = f"gap in message numbering: missing {names}; the agent cannot be loaded"
        out.append(Problem("error", file(missing[0]), why))
    if agent.indices and agent.indices[0] == 0 and 0 in msgs and msgs[0].message["role"] != "user":
        out.append(Problem("error", file(0), "the transcript starts with an assistant message"))
    return out


def _message_errors(
    agent: AgentSnapshot, i: int, current: MessageRecord, decision: NextInvoke
) -> list[str]:
    """Alternation and toolUse/toolResult pairing of message `i` with its neighbours."""
    errors: list[str] = []
    message, before = current.message, agent.messages.get(i - 1)
    if before is not None and before.message["role"] == message["role"]:
        errors.append(
            f"roles do not alternate: message_{i - 1} and message_{i} are both {message['role']}"
        )
    asked = {u["toolUseId"] for u in tool_uses(before.as_message())} if before else set()
    for result in tool_results(current.as_message()) if before is not None or i == 0 else []:
        if result["toolUseId"] not in asked:
            errors.append(
                f"toolResult {result['toolUseId']} answers no toolUse of the message before it"
            )
    uses = tool_uses(current.as_message())
    after = agent.messages.get(i + 1)
    if uses and after is not None:
        answered = {r["toolUseId"] for r in tool_results(after.as_message())}
        errors += [
            f"orphan toolUse {use['toolUseId']} ({use['name']}): message_{i + 1} has no toolResult for it"
            for use in uses
            if use["toolUseId"] not in answered
        ]
    elif uses and i == agent.indices[-1] and decision.action not in _TRAILING_USE_COVERED:
        errors.append(_trailing_orphan(uses))
    return errors


def _trailing_orphan(uses: list[ToolUse]) -> str:
    """The finding for a last-message toolUse that the next invoke will answer "interrupted"."""
    ids = ", ".join(f"{u['toolUseId']} ({u['name']})" for u in uses)
    why = "no toolResult follows and no active after_model bookmark covers it"
    return f"orphan toolUse {ids}: {why} (the next invoke answers it with an 'interrupted' error, not re-run)"


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
