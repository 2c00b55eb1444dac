"""Record each resume from a bookmark in the agent's own files (resumes/, elsai.session.layout).

Written only when an invocation resumes (never per cycle), create-only, one file per resume,
and only once the resumed invocation's first message write has landed: a stale writer (a
zombie refused at that write) leaves no record behind. A failed record write is logged, never
raised: the resume itself matters more than its record.
"""

from __future__ import annotations

import logging
import secrets
from datetime import UTC, datetime

from elsai.session.layout import keys
from elsai.session.layout.records import ResumeRecord, dump
from elsai.session.storage.base import StorageBackend
from elsai.types import ResumePlan

logger: logging.Logger = logging.getLogger("elsai.session")


class ResumeRecorder:
    """Holds the current invocation's resume until its first message write lands."""

    def __init__(self, storage: StorageBackend, session_id: str, agent_id: str) -> None:
        self.storage: StorageBackend = storage
        self.session_id: str = session_id
        self.agent_id: str = agent_id
        self._due: tuple[ResumeRecord, datetime] | None = None

    def due(self, plan: ResumePlan, message_count: int, invocation_id: str | None) -> None:
        """The invocation begins: remember its resume (None clears one never written)."""
        if plan.position is None:
            self._due = None
            return
        now = datetime.now(UTC)
        record = ResumeRecord(
            position=plan.position,
            cycle_index=plan.cycle_index,
            message_count=message_count,
            resumed_at=now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            invocation_id=invocation_id,
        )
        self._due = (record, now)

    def after_write(self, version: str) -> str:
        """A message write landed: store the due record (once); hands `version` back."""
        if self._due is not None:
            record, at = self._due
            self._due = None
            self._store(record, at)
        return version

    def _store(self, record: ResumeRecord, at: datetime) -> None:
        stamp = at.strftime("%Y%m%dT%H%M%S%fZ")
        key = keys.resume_key(self.session_id, self.agent_id, stamp, secrets.token_hex(4))
        try:
            self.storage.create(key, dump(record))
        except Exception as exc:  # the resume goes on; only its record is lost
            logger.warning(
                "could not record the resume of agent %r in session %r: %s: %s",
                self.agent_id,
                self.session_id,
                type(exc).__name__,
                exc,
            )
