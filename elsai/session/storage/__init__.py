"""Session storage backends: they move bytes under keys and enforce single-writer safety.

The key layout lives in `elsai.session.layout.keys`; backends know nothing about it.
"""

from __future__ import annotations

from elsai.session.storage.base import (
    SessionConflictError,
    StorageBackend,
    StorageError,
    StoredObject,
)
from elsai.session.storage.file import FileStorage
from elsai.session.storage.s3 import S3Storage

__all__ = [
    "FileStorage",
    "S3Storage",
    "SessionConflictError",
    "StorageBackend",
    "StorageError",
    "StoredObject",
]
