"""SessionBinding: one agent's durability, implementing the loop's LoopPersistence.

Rules it keeps (see ../shared/design.md, "Persistence invariants"):
- each boundary writes messages first, then agent.json if it changed, then the bookmark last;
- message files are created, never blindly overwritten; agent.json, checkpoint.json and a
  merged last message are replaced only if unchanged since we last saw them;
- after load nothing is read again: the binding knows the next index and every version.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from elsai.checkpoint.config import CheckpointConfig
from elsai.checkpoint.gate import gate_denial
from elsai.checkpoint.model import Checkpoint, utc_now
from elsai.conversation.base import sanitize_window_start
from elsai.errors import AgentOutOfSyncError
from elsai.session.layout import keys
from elsai.session.layout.records import AgentRecord, MessageRecord, SessionCorruptError, dump, load
from elsai.session.read.window import load_window
from elsai.session.storage.base import StorageBackend, StoredObject
from elsai.session.write.bound import BoundAgent
from elsai.session.write.input_ledger import InputLedger
from elsai.session.write.lease import OwnershipLease
from elsai.session.write.pending import PendingWrite
from elsai.session.write.resumes import ResumeRecorder
from elsai.session.write.segment_writer import SegmentWriter
from elsai.session.write.session_record import create_session_record
from elsai.session.write.settings import BindingSettings
from elsai.types import ContentBlock, Message, Position, ResumePlan

logger: logging.Logger = logging.getLogger("elsai.session")
MAX_REMEMBERED_INVOCATIONS = 50


class SessionBinding:
    """One agent's durability: loads it once, then writes at the loop's boundaries.

    Built by `SessionManager.bind_agent` from its storage, session id and `BindingSettings`.
    """

    def __init__(
        self,
        storage: StorageBackend,
        session_id: str,
        agent: BoundAgent,
        settings: BindingSettings,
    ) -> None:
        self.storage = storage
        self.session_id = session_id
        self.settings = settings
        self.agent = agent
        self.agent_id: str = agent.agent_id
        self._checkpoint_config: CheckpointConfig | None = agent.config.checkpoint
        self._agent_key = keys.agent_key(self.session_id, self.agent_id)
        self._checkpoint_key = keys.checkpoint_key(self.session_id, self.agent_id)
        self.next_index: int = 0
        self.last_message: Message | None = None
        self._last_record: MessageRecord | None = None
        self._last_version: str | None = None
        self._agent_version: str | None = None
        self._agent_signature: str | None = None
        self._written_removed_count = 0
        self.bookmark: Checkpoint | None = None
        self._bookmark_version: str | None = None
        self.recorded_invocations: list[str] = []
        self.lease: OwnershipLease | None = None
        self._inputs: InputLedger = InputLedger()
        #: The bookmark write overlapping the next step (elsai.session.write.pending).
        self.pending: PendingWrite = PendingWrite()
        #: Derived message segments (elsai.session.read.segments), written in the background.
        self.segments: SegmentWriter = SegmentWriter(self.storage, self.session_id, self.agent_id)
        self.resumes: ResumeRecorder = ResumeRecorder(self.storage, self.session_id, self.agent_id)
        #: Why a message write failed (memory is then ahead of the store); None while in sync.
        self.out_of_sync: str | None = None
        self._load()

    # -- load ----------------------------------------------------------------------------

    def _restore_window(self, state: dict[str, Any]) -> list[Message]:
        """The conversation manager's restore; state it cannot read is a corrupt agent.json."""
        try:
            return self.agent.conversation_manager.restore(state)
        except (TypeError, ValueError, OverflowError) as exc:
            where = self.storage.describe(self._agent_key)
            raise SessionCorruptError(
                f"corrupt session file {where}: conversation_manager_state: {exc}"
            ) from exc

    def _load(self) -> None:
        storage, agent = self.storage, self.agent
        session_key = keys.session_key(self.session_id)
        lease_key = keys.lease_key(self.session_id, self.agent_id)
        session_obj, agent_obj, bookmark_obj, lease_obj = storage.read_many(
            [session_key, self._agent_key, self._checkpoint_key, lease_key]
        )
        self._bind_lease(lease_obj)
        if session_obj is None:
            create_session_record(storage, self.session_id)

        prefix: list[Message] = []
        hints: list[int] = []
        if agent_obj is not None:
            prefix = self._restore_agent(agent_obj, hints)
        if bookmark_obj is not None:
            self._bookmark_version = bookmark_obj.version
            if self._checkpoint_config is not None:
                self.bookmark = Checkpoint.from_json(
                    bookmark_obj.data, storage.describe(self._checkpoint_key)
                )
                hints.append(self.bookmark.message_count)

        window = load_window(
            storage,
            self.session_id,
            self.agent_id,
            max(hints) if hints else None,
            agent.conversation_manager.restore_window_start,
        )
        self.next_index, start, records = window.total, window.start, window.records
        for index, data in (window.files or {}).items():
            self.segments.loaded(index, data)
        if records:
            self._last_record, self._last_version = records[-1], window.last_version
            self.last_message = records[-1].as_message()
        agent.interrupts.settle_if_answered(self.last_message)  # a crash before agent.json
        for message_record in records:
            for invocation in message_record.invocation_ids:
                self._remember(invocation)
            self._inputs.remember(message_record.invocation_ids, message_record.as_message())

        initial = list(agent.messages)
        if self.next_index > 0:
            tail = [r.as_message() for r in records]
            agent.messages[:] = prefix + (sanitize_window_start(tail) if start > 0 else tail)
        elif initial:
            agent.messages[:] = []
            for message in initial:  # a new session seeded with messages: store them
                agent.messages.append(message)
                self.message_appended(message)
        if agent_obj is None:
            self._write_agent(force=True)

    def _restore_agent(self, agent_obj: StoredObject, hints: list[int]) -> list[Message]:
        """Apply agent.json (state, conversation manager, interrupts); returns the CM's prefix."""
        agent = self.agent
        record = load(AgentRecord, agent_obj.data, self.storage.describe(self._agent_key))
        self._agent_version = agent_obj.version
        agent.state.replace_all(record.state)
        prefix = self._restore_window(record.conversation_manager_state)
        self._written_removed_count = agent.conversation_manager.removed_message_count
        self.recorded_invocations = list(record.invocation_ids)
        agent.interrupts.restore(record.interrupt_state)
        self._agent_signature = self._signature()
        hints.append(record.message_count)
        return prefix

    def _bind_lease(self, loaded: StoredObject | None) -> None:
        """The ownership lease as read with the rest (elsai.session.write.lease); None turns it off."""
        seconds = self.settings.lease_seconds
        if seconds is not None:
            self.lease = OwnershipLease(
                self.storage, self.session_id, self.agent_id, seconds=seconds, loaded=loaded
            )

    # -- LoopPersistence -------------------------------------------------------------------

    def begin_invocation(
        self, invocation_id: str | None, input_content: list[ContentBlock] | None = None
    ) -> ResumePlan:
        """Take the lease, then the resume gate's verdict (the loop repairs an orphan toolUse)."""
        if self.out_of_sync is not None:
            raise AgentOutOfSyncError(
                f"agent {self.agent_id!r} in session {self.session_id!r}: a message write "
                f"failed ({self.out_of_sync}), so this object holds messages the store does "
                "not; nothing was run or written. Rebuild the agent with the same session_id "
                "and agent_id (it loads what is stored) and invoke it again."
            )
        self.pending.settle()
        recorded = invocation_id is not None and invocation_id in self.recorded_invocations
        if recorded and input_content and invocation_id is not None:
            # Finished or not, the stored input wins a retry: another prompt would be dropped.
            where = f"session {self.session_id!r} for agent {self.agent_id!r}"
            self._inputs.check(invocation_id, input_content, where)
        if self.lease is not None:
            self.lease.acquire(invocation_id)  # before the gate: a refused writer runs nothing
        if self.agent.interrupts.active:
            return ResumePlan(input_already_recorded=recorded)  # an interrupt is not a crash
        plan = self._gate()
        # a resume is recorded once its first write lands (a refused zombie leaves no record)
        self.resumes.due(plan, self.next_index, invocation_id)
        return ResumePlan(
            position=plan.position, cycle_index=plan.cycle_index, input_already_recorded=recorded
        )

    def message_appended(self, message: Message, *, invocation_id: str | None = None) -> None:
        """Create message_<N>.json for a new message (never overwrites)."""
        # No settle: a pending bookmark names only messages already stored (PendingWrite).
        index = self.next_index
        record = MessageRecord(
            message_id=index,
            created_at=utc_now(),
            message=dict(message),
            invocation_ids=[invocation_id] if invocation_id else [],
        )
        data, key = dump(record), keys.message_key(self.session_id, self.agent_id, index)
        self._last_version = self._message_write(lambda: self.storage.create(key, data))
        self.segments.written(index, data)
        self.next_index = index + 1
        self.last_message, self._last_record = message, record
        self._remember(invocation_id)
        self._inputs.remember(record.invocation_ids, message)

    def last_message_replaced(self, message: Message, *, invocation_id: str | None = None) -> None:
        """Replace the last message file, only if unchanged since we wrote it."""
        self.pending.settle()
        if self._last_record is None:
            raise RuntimeError("no stored message to extend")
        ids = self._last_record.invocation_ids
        if invocation_id and invocation_id not in ids:
            ids = [*ids, invocation_id]
        record = self._last_record.model_copy(
            update={"message": dict(message), "invocation_ids": list(ids)}
        )
        key = keys.message_key(self.session_id, self.agent_id, self.next_index - 1)
        data = dump(record)
        expected = self._last_version
        self._last_version = self._message_write(
            lambda: self.storage.replace(key, data, expected_version=expected)
        )
        self.segments.replaced(self.next_index - 1, data)
        self.last_message, self._last_record = message, record
        self._remember(invocation_id)
        self._inputs.remember(record.invocation_ids, message)

    def end_invocation(self) -> None:
        """Land the pending bookmark (its error is raised here), then release the lease.

        The lease is released even if the bookmark failed, so the next writer need not wait
        for it to expire.
        """
        try:
            self.pending.settle()
        finally:
            self.segments.flush()  # nothing left running once the invocation returns
            if self.lease is not None:
                self.lease.release()

    def boundary(self, position: Position, cycle_index: int) -> bool:
        """Write agent.json if it changed, then the bookmark if this boundary is saved.

        With overlap on, the bookmark is started in the background (`self.pending`): at
        after_tools it overlaps the model call and the write of its reply, at after_model
        (opt-in) the tools and their result's write. The next boundary waits for it.
        """
        self.pending.settle()
        if self.lease is not None:
            self.lease.check()
        self._write_agent(force=False)
        if self._checkpoint_config is None or not self._checkpoint_config.saves(position):
            # Without a bookmark, only a finished tool batch is a safe place to stop.
            return position == "after_tools"
        bookmark = Checkpoint(
            position=position,
            cycle_index=cycle_index,
            created_at=utc_now(),
            message_count=self.next_index,
            agent_id=self.agent_id,
            execution_status="active",
        )
        if self.settings.overlaps(position):
            self.pending.start(lambda: self._write_bookmark(bookmark))
        else:
            self._write_bookmark(bookmark)
        return True

    def settle(self) -> None:
        """Wait for the overlapped bookmark write; its error is raised here."""
        self.pending.settle()

    def save_state(self) -> None:
        """Write agent.json if it changed (an interrupt paused the loop)."""
        self.pending.settle()
        self._write_agent(force=False)

    def turn_ended(self) -> None:
        """Write agent.json, then finalize the bookmark as completed."""
        self.pending.settle()
        self._write_agent(force=False, include_window=True)
        if self._checkpoint_config is None or self.bookmark is None:
            return
        if not self.bookmark.is_active and self.bookmark.message_count == self.next_index:
            return  # already finalized for exactly these messages
        try:
            done = self.bookmark.model_copy(
                update={
                    "execution_status": "completed",
                    "message_count": self.next_index,
                    "created_at": utc_now(),
                }
            )
            self._write_bookmark(done)
        except Exception as exc:
            # The turn itself succeeded; a stale bookmark is gated on next load.
            logger.warning(
                "could not finalize checkpoint %s after end_turn: %s: %s",
                self.storage.describe(self._checkpoint_key),
                type(exc).__name__,
                exc,
            )

    # -- resume gate -----------------------------------------------------------------------

    def _gate(self) -> ResumePlan:
        bookmark = self.bookmark
        if self._checkpoint_config is None or bookmark is None or not bookmark.is_active:
            return ResumePlan()
        reason = gate_denial(bookmark, self.agent_id, self.next_index, self.last_message)
        if reason:
            logger.warning(
                "checkpoint resume denied for agent %r in session %r: %s; continuing from messages only",
                self.agent_id,
                self.session_id,
                reason,
            )
            return ResumePlan()
        return ResumePlan(position=bookmark.position, cycle_index=bookmark.cycle_index)

    # -- writes ----------------------------------------------------------------------------

    def _message_write(self, perform: Callable[[], str]) -> str:
        """A message write; if it fails, memory is ahead of the store and the object stops."""
        try:
            return self.resumes.after_write(perform())
        except Exception as exc:
            self.out_of_sync = f"{type(exc).__name__}: {exc}"
            raise

    def _write_bookmark(self, bookmark: Checkpoint) -> None:
        self._bookmark_version = self.storage.replace(
            self._checkpoint_key, bookmark.to_json(), expected_version=self._bookmark_version
        )
        self.bookmark = bookmark

    def _signature(self) -> str:
        """What makes agent.json worth rewriting at a boundary.

        The sliding window's removed count is left out: it moves every cycle, and a stale
        value only makes a restore load a few more messages than needed.
        """
        cm_state = {
            k: v
            for k, v in self.agent.conversation_manager.get_state().items()
            if k != "removed_message_count"
        }
        return json.dumps(
            [
                self.agent.state.to_dict(),
                cm_state,
                self.recorded_invocations[-MAX_REMEMBERED_INVOCATIONS:],
                self.agent.interrupts.to_dict(),
            ],
            sort_keys=True,
            default=str,
        )

    def _write_agent(self, *, force: bool, include_window: bool = False) -> None:
        signature = self._signature()
        removed = self.agent.conversation_manager.removed_message_count
        window_moved = include_window and removed != self._written_removed_count
        if not force and signature == self._agent_signature and not window_moved:
            return
        now = utc_now()
        record = AgentRecord(
            agent_id=self.agent_id,
            created_at=now,
            updated_at=now,
            state=self.agent.state.to_dict(),
            conversation_manager_state=self.agent.conversation_manager.get_state(),
            invocation_ids=self.recorded_invocations[-MAX_REMEMBERED_INVOCATIONS:],
            message_count=self.next_index,
            interrupt_state=self.agent.interrupts.to_dict(),
        )
        self._agent_version = self.storage.replace(
            self._agent_key, dump(record), expected_version=self._agent_version
        )
        self._agent_signature = signature
        self._written_removed_count = removed

    def _remember(self, invocation_id: str | None) -> None:
        if invocation_id and invocation_id not in self.recorded_invocations:
            self.recorded_invocations.append(invocation_id)
