"""Sessions: durable conversations in a fixed layout on local files or S3."""

from elsai.errors import AgentOutOfSyncError
from elsai.session.layout.records import SessionCorruptError
from elsai.session.manager import FileSessionManager, S3SessionManager, SessionManager
from elsai.session.storage.base import SessionConflictError, StorageError

__all__ = [
    "AgentOutOfSyncError",
    "FileSessionManager",
    "S3SessionManager",
    "SessionConflictError",
    "SessionCorruptError",
    "SessionManager",
    "StorageError",
]
