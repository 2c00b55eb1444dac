"""Read an agent's resume records (written by elsai.session.write.resumes), oldest first.

Tolerant like the rest of inspect: a record that does not parse is reported, not raised.
"""

from __future__ import annotations

import re

from elsai.session.layout import keys
from elsai.session.layout.records import ResumeRecord, SessionCorruptError, load
from elsai.session.storage.base import StorageBackend

_NAME = re.compile(keys.RESUME_FILE_PATTERN + "$")
#: A store holds at most this many records per agent for a reader (the newest are kept).
MAX_READ = 200


def load_resumes(
    storage: StorageBackend, session_id: str, agent_id: str
) -> tuple[list[ResumeRecord], list[str]]:
    """The agent's resume records by time, and a line per unreadable one."""
    prefix = keys.resumes_prefix(session_id, agent_id)
    listed = sorted(k for k in storage.list(prefix) if _NAME.search(k))[-MAX_READ:]
    records, problems = [], []
    for key, found in zip(listed, storage.read_many(listed), strict=True):
        if found is None:
            continue  # removed since the listing
        try:
            records.append(load(ResumeRecord, found.data, storage.describe(key)))
        except SessionCorruptError as exc:
            problems.append(str(exc))
    return records, problems
