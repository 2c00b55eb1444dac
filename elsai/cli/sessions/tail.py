"""`elsai sessions tail`: follow a live session by polling the store.

Polling, not watching, because the same code must follow S3 (no change feed) and local files.
Each poll costs one listing plus a few small reads per agent: the bookmark, agent.json and
the last message seen (a resumed turn may merge new input into it, rewriting that file).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from typing import Any

from elsai.checkpoint.model import Checkpoint
from elsai.cli.render import Style, bookmark_line, compact, render_message, to_json, write
from elsai.cli.sessions.store import CliError, Store
from elsai.ids import validate_id
from elsai.session.layout import keys
from elsai.session.layout.records import MessageRecord, SessionCorruptError, load


@dataclass
class Cursor:
    """What has been shown of one agent so far."""

    next_index: int = 0
    last_version: str | None = None
    bookmark_version: str | None = None
    agent_version: str | None = None
    pending: int = 0
    final: bool = False  # the last message shown is a final answer (assistant, no tool call)
    active: bool = False  # the bookmark says work may be unfinished
    moved: bool = False  # a message landed after tail started


class Follower:
    """Polls one session and prints what is new since the last poll (`sessions tail`)."""

    def __init__(self, args: argparse.Namespace, store: Store, style: Style) -> None:
        self.args: argparse.Namespace = args
        self.store: Store = store
        self.style: Style = style
        self.session_id: str = args.session
        self.cursors: dict[str, Cursor] = {}
        self.completed: bool = False
        #: True when tail waited for the session to appear: then even the first bookmark seen
        #: was written after tail started, so a completed one ends --until-complete.
        self.appeared: bool = False

    # -- output ----------------------------------------------------------------------------

    def emit(self, event: dict[str, Any], lines: list[str]) -> None:
        """Print one event, as a JSON line with `--json` or as `lines` for a person."""
        if self.args.json:
            print(to_json(event))
        else:
            write(lines)

    def message(self, aid: str, index: int, record: MessageRecord, updated: bool = False) -> None:
        """Show one stored message (new, or rewritten by a merge when `updated`)."""
        event: dict[str, Any] = {
            "event": "message_updated" if updated else "message",
            "agent_id": aid,
        }
        event.update(index=index, created_at=record.created_at, message=record.message)
        tag = " (updated)" if updated else ""
        self.emit(
            event,
            render_message(
                index,
                record.message,
                self.style,
                created_at=record.created_at + tag,
                prefix=f"{aid} ",
            ),
        )

    def bookmark(self, aid: str, bookmark: Checkpoint | None, problem: str | None = None) -> None:
        """Show a bookmark change, or why the stored bookmark cannot be read."""
        head = self.style.paint(f"{aid} bookmark ", "bold")
        if problem:
            self.emit(
                {"event": "bookmark", "agent_id": aid, "error": problem},
                [head + self.style.paint(problem, "red")],
            )
            return
        colour = "green" if bookmark and not bookmark.is_active else "yellow"
        dumped = bookmark.model_dump() if bookmark else None
        self.emit(
            {"event": "bookmark", "agent_id": aid, "checkpoint": dumped},
            [head + self.style.paint(bookmark_line(bookmark), colour)],
        )

    # -- polling ---------------------------------------------------------------------------

    def poll(self, *, first: bool) -> None:
        """List the session once and show what changed in each followed agent."""
        prefix = keys.agents_prefix(self.session_id)
        found: dict[str, list[int]] = {}
        for key in self.store.storage.list(prefix):
            aid, _, rest = key[len(prefix) :].partition("/")
            if not aid.startswith("agent_") or self.args.agent not in (None, aid[6:]):
                continue
            index = keys.message_index(rest) if rest.startswith("messages/") else None
            found.setdefault(aid[6:], [])
            if index is not None:
                found[aid[6:]].append(index)
        for aid in sorted(found):
            self.poll_agent(aid, sorted(found[aid]), first=first)
        sys.stdout.flush()

    def poll_agent(self, aid: str, indices: list[int], *, first: bool) -> None:
        """Show one agent's new messages, bookmark and interrupts, reading only what changed."""
        sid, storage = self.session_id, self.store.storage
        cursor = self.cursors.setdefault(aid, Cursor())
        if first:
            cursor.next_index = max(0, len(indices) - self.args.last)
            if cursor.next_index:
                self.emit(
                    {"event": "skipped", "agent_id": aid, "count": cursor.next_index},
                    [self.style.paint(f"{aid} … {cursor.next_index} earlier message(s)", "dim")],
                )
        new: list[int] = []
        for i in indices:  # only the contiguous run: files are created in order
            if i == cursor.next_index + len(new):
                new.append(i)
        last_seen = cursor.next_index - 1 if cursor.next_index else None
        wanted = [keys.checkpoint_key(sid, aid), keys.agent_key(sid, aid)]
        wanted += [
            keys.message_key(sid, aid, i)
            for i in ([last_seen] if last_seen is not None else []) + new
        ]
        objects = storage.read_many(wanted)
        bookmark_obj, agent_obj, messages = objects[0], objects[1], objects[2:]
        if last_seen is not None:
            obj, messages = messages[0], messages[1:]
            if obj is not None and obj.version != cursor.last_version:
                if cursor.last_version is not None:  # else: first sight of a message not shown
                    self.show_message(aid, last_seen, obj.data, updated=True)
                cursor.last_version = obj.version
        for index, obj in zip(new, messages, strict=True):
            if obj is None:
                break  # vanished since the listing: look again next poll
            self.show_message(aid, index, obj.data)
            cursor.next_index, cursor.last_version = index + 1, obj.version
            cursor.final, cursor.moved = _is_final(obj.data), cursor.moved or not first
        if agent_obj is not None and agent_obj.version != cursor.agent_version:
            cursor.agent_version = agent_obj.version
            self.show_interrupts(aid, cursor, agent_obj.data)
        version = bookmark_obj.version if bookmark_obj else None
        if version != cursor.bookmark_version:
            cursor.bookmark_version = version
            self.show_bookmark(
                aid, cursor, bookmark_obj.data if bookmark_obj else None, first=first
            )

    def show_message(self, aid: str, index: int, data: bytes, updated: bool = False) -> None:
        """Show a message read from the store, or an error line if the file is corrupt."""
        where = self.store.storage.describe(keys.message_key(self.session_id, aid, index))
        try:
            self.message(aid, index, load(MessageRecord, data, where), updated)
        except SessionCorruptError as exc:
            self.emit(
                {"event": "error", "agent_id": aid, "index": index, "error": str(exc)},
                [self.style.paint(f"{aid} [{index}] unreadable: {exc}", "red")],
            )

    def catch_up(self, aid: str, cursor: Cursor, count: int) -> None:
        """Show messages a bookmark counts but the listing missed.

        They landed between the listing and the bookmark read (a writer stores messages
        first, the bookmark last).
        """
        wanted = list(range(cursor.next_index, count))
        objects = self.store.storage.read_many(
            [keys.message_key(self.session_id, aid, i) for i in wanted]
        )
        for index, obj in zip(wanted, objects, strict=True):
            if obj is None:
                return
            self.show_message(aid, index, obj.data)
            cursor.next_index, cursor.last_version = index + 1, obj.version
            cursor.final, cursor.moved = _is_final(obj.data), True

    def turn_ended(self) -> bool:
        """A turn that ran while tail watched is over.

        Its agents' last messages are final answers (and their bookmarks, if any, say so).
        A run that calls no tool writes no bookmark, so the final answer is what counts.
        """
        moved = [c for c in self.cursors.values() if c.moved]
        return bool(moved) and all(c.final and not c.active for c in moved)

    def waiting_for(self) -> str:
        """What --until-complete waits for, said once after the stored state is shown."""
        if self.cursors and all(c.final and not c.active for c in self.cursors.values()):
            return (
                "the session is complete (its last message is a final answer); "
                "waiting for the next turn to end with one"
            )
        busy = [a for a, c in sorted(self.cursors.items()) if not (c.final and not c.active)]
        return (
            f"waiting until the last message of {', '.join(busy) or 'an agent'} is a final answer"
        )

    def show_bookmark(self, aid: str, cursor: Cursor, data: bytes | None, *, first: bool) -> None:
        """Show a new bookmark; one completed while following ends `--until-complete`."""
        if data is None:
            if not first:
                self.bookmark(aid, None)
            return
        where = self.store.storage.describe(keys.checkpoint_key(self.session_id, aid))
        try:
            bookmark = Checkpoint.from_json(data, where)
        except Exception as exc:  # a corrupt bookmark is news, not a reason to stop following
            self.bookmark(aid, None, problem=str(exc))
            return
        self.catch_up(aid, cursor, bookmark.message_count)
        self.bookmark(aid, bookmark)
        cursor.active = bookmark.is_active
        if (self.appeared or not first) and not bookmark.is_active:
            self.completed = True

    def show_interrupts(self, aid: str, cursor: Cursor, data: bytes) -> None:
        """Show a change in the number of interrupts waiting for a response."""
        try:
            pending = json.loads(data).get("interrupt_state", {}).get("pending", [])
        except (ValueError, AttributeError):
            return
        if len(pending) == cursor.pending:
            return
        cursor.pending = len(pending)
        text = "; ".join(
            f"{p.get('name')} ({p.get('id')}) reason {compact(p.get('reason'))}" for p in pending
        )
        line = f"{aid} interrupt pending: {text}" if pending else f"{aid} interrupts answered"
        self.emit(
            {"event": "interrupts", "agent_id": aid, "pending": pending},
            [self.style.paint(line, "magenta")],
        )


def follow(args: argparse.Namespace, store: Store, style: Style) -> int:
    """Run `sessions tail`: poll until interrupted, timed out or (with a flag) completed."""
    deadline = time.monotonic() + args.timeout if args.timeout else None

    def expired() -> bool:
        return deadline is not None and time.monotonic() >= deadline

    announced = False
    if args.wait:
        validate_id(args.session, "session id")
        while not store.storage.list(keys.session_dir(args.session)):
            if not announced:
                print(
                    f"elsai: waiting for session {args.session} in {store.location}",
                    file=sys.stderr,
                )
                announced = True
            if expired():
                return 0 if not args.until_complete else _timed_out(args)
            time.sleep(args.interval)
    else:
        store.require_session(args.session)
    if args.agent and not (
        _valid(args.agent) and store.storage.list(keys.agent_dir(args.session, args.agent))
    ):
        raise CliError(f"no agent {args.agent} in session {args.session} ({store.location})", 2)
    follower = Follower(args, store, style)
    follower.appeared = args.wait and announced
    if not args.json:
        write(
            [
                style.paint(
                    f"following session {args.session} · {store.location} · Ctrl-C to stop", "dim"
                )
            ]
        )
    follower.poll(first=True)
    if args.until_complete:
        text = follower.waiting_for()
        follower.emit({"event": "waiting", "for": text}, [style.paint(f"elsai: {text}", "dim")])
        sys.stdout.flush()
    while not (args.until_complete and (follower.completed or follower.turn_ended())):
        if expired():
            return _timed_out(args) if args.until_complete else 0
        time.sleep(
            args.interval
            if deadline is None
            else max(0.0, min(args.interval, deadline - time.monotonic()))
        )
        follower.poll(first=False)
    return 0


def _timed_out(args: argparse.Namespace) -> int:
    raise CliError(f"timed out after {args.timeout:g}s before a bookmark was completed", 1)


def _is_final(data: bytes) -> bool:
    try:
        message = json.loads(data)["message"]
        content = message["content"]
    except (ValueError, KeyError, TypeError):
        return False
    return message.get("role") == "assistant" and not any("toolUse" in b for b in content)


def _valid(agent_id: str) -> bool:
    try:
        validate_id(agent_id, "agent id")
    except ValueError:
        return False
    return True
