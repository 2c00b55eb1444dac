"""Record each resume from a bookmark in the agent's own files (resumes/, elsai.session.layout).

Written only when an invocation resumes (never per cycle), create-only, one file per resume, so
it cannot race the boundary writes. A failed write is logged, never raised: the resume itself
matters more than its record.
"""

from __future__ import annotations

import logging
import secrets
from datetime import UTC, datetime

from elsai.session.layout import keys
from elsai.session.layout.records import ResumeRecord, dump
from elsai.session.storage.base import StorageBackend
from elsai.types import ResumePlan

logger = logging.getLogger("elsai.session")


def record_resume(
    storage: StorageBackend,
    session_id: str,
    agent_id: str,
    plan: ResumePlan,
    message_count: int,
    invocation_id: str | None,
) -> str | None:
    """Store one resume record for `plan`; its key, or None if the write failed (logged)."""
    now = datetime.now(UTC)
    record = ResumeRecord(
        position=str(plan.position),
        cycle_index=plan.cycle_index,
        message_count=message_count,
        resumed_at=now.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        invocation_id=invocation_id,
    )
    stamp = now.strftime("%Y%m%dT%H%M%S%fZ")
    key = keys.resume_key(session_id, agent_id, stamp, secrets.token_hex(4))
    try:
        storage.create(key, dump(record))
    except Exception as exc:  # the resume goes on; only its record is lost
        logger.warning(
            "could not record the resume of agent %r in session %r: %s: %s",
            agent_id,
            session_id,
            type(exc).__name__,
            exc,
        )
        return None
    return key
