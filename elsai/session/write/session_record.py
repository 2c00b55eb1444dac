"""session.json's first write, shared by the manager and a binding that finds none."""

from __future__ import annotations

import contextlib

from elsai.checkpoint.model import utc_now
from elsai.session.layout import keys
from elsai.session.layout.records import SessionRecord, dump
from elsai.session.storage.base import SessionConflictError, StorageBackend


def create_session_record(storage: StorageBackend, session_id: str) -> SessionRecord:
    """Write session.json; another process may create it first (same content, nothing lost)."""
    record = SessionRecord(session_id=session_id, created_at=utc_now())
    with contextlib.suppress(SessionConflictError):
        storage.create(keys.session_key(session_id), dump(record))
    return record
