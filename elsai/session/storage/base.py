"""The byte-moving interface every session backend implements.

Backends know nothing of sessions, agents or checkpoints: they read, create, replace and
list keys. Single-writer safety lives here because only the backend can make it atomic:

- `create` never overwrites (S3 `IfNoneMatch="*"`, exclusive create on disk);
- `replace` succeeds only if the stored version is still the one the caller last saw
  (S3 `IfMatch` ETag; a version token under a file lock on disk).

Both raise `SessionConflictError` when another writer got there first, and leave what is
stored untouched.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass

from elsai.errors import ElsaiError, SessionConflictError

#: What a caller should do about a lost race (appended to every conflict message).
CONFLICT_ADVICE = (
    ". What to do: if another process is working on this agent, let it finish; then rebuild "
    "the agent with the same session_id and agent_id and invoke it again, and it continues "
    "from what is stored (`elsai sessions show` shows what that is)"
)

__all__ = ["SessionConflictError", "StorageBackend", "StorageError", "StoredObject"]


class StorageError(ElsaiError):
    """The backend failed to read or write (permissions, network, disk)."""


def os_reason(exc: OSError) -> str:
    """What an OS error says, for a StorageError's message (its text, not its repr)."""
    return exc.strerror or str(exc)


@dataclass(frozen=True)
class StoredObject:
    """What a read returns: the bytes and the version a conditional replace must name.

    Attributes:
        data: The object's bytes.
        version: Opaque token: the ETag on S3, a content hash on disk.
    """

    data: bytes
    version: str


class StorageBackend(abc.ABC):
    """Moves bytes under keys; the one place single-writer safety is made atomic.

    Writes are idempotent for the writer's own retry: when an attempt of this very write may
    have been applied but its outcome was lost (a dropped response, an NFS retransmit), a
    backend that finds that write stored (S3: exactly its bytes; files: its inode) reports
    success with its version. Without such an attempt a failed condition is always a conflict,
    even if the stored bytes happen to be equal (see `elsai.session.storage.s3`).
    """

    @abc.abstractmethod
    def read(self, key: str) -> StoredObject | None:
        """The object at `key`, or None if there is none."""

    def read_many(self, keys: Sequence[str]) -> list[StoredObject | None]:
        """Read several keys; backends with network latency fan out in parallel."""
        return [self.read(k) for k in keys]

    @abc.abstractmethod
    def create(self, key: str, data: bytes) -> str:
        """Write a new object atomically; it is never overwritten.

        Returns:
            The new object's version.

        Raises:
            SessionConflictError: `key` already holds other bytes.
        """

    @abc.abstractmethod
    def replace(self, key: str, data: bytes, *, expected_version: str | None) -> str:
        """Atomically replace `key` if its stored version is `expected_version`.

        `expected_version=None` means "I believe it does not exist yet" (create semantics).

        Returns:
            The new version.

        Raises:
            SessionConflictError: The stored version is another (or the key is missing).
        """

    @abc.abstractmethod
    def list(self, prefix: str) -> list[str]:
        """All keys under `prefix` (full keys, any order)."""

    def describe(self, key: str) -> str:
        """Human-readable location of `key` for error messages (path or s3:// URL)."""
        return key
