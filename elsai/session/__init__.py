"""Sessions: durable conversations in a fixed layout on local files or S3."""

from elsai.session.layout.records import SessionCorruptError
from elsai.session.manager import FileSessionManager, S3SessionManager, SessionManager
from elsai.session.storage.base import SessionConflictError, StorageError

__all__ = [
    "FileSessionManager",
    "S3SessionManager",
    "SessionConflictError",
    "SessionCorruptError",
    "SessionManager",
    "StorageError",
]
