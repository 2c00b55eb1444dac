"""The directories a file store writes into: made once, fsynced when they gain an entry.

A write checks its directory against the ones already made or found instead of asking the
filesystem each time (a `stat` per write). One that vanished since (a session deleted under a
running writer) shows as a missing file when the write opens its temp file, and is made again.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from typing import TypeVar

from elsai.session.storage.base import StorageError, os_reason

_T = TypeVar("_T")
#: directories remembered per store (a long-lived server writes many sessions)
_KNOWN_MAX = 4096


class Directories:
    """Makes and remembers the directories of one store; `fsync` as the store's."""

    def __init__(self, *, fsync: bool) -> None:
        self.fsync = fsync
        self._known: set[str] = set()

    def ensure(self, directory: str) -> None:
        """Create `directory` and missing parents, fsyncing each parent that gained an entry."""
        if directory in self._known:
            return
        self._make(directory)
        if len(self._known) >= _KNOWN_MAX:
            self._known.clear()
        self._known.add(directory)

    def reopening(self, directory: str, opener: Callable[[], _T]) -> _T:
        """`opener()`, run again after making `directory` if it vanished since it was seen."""
        try:
            return opener()
        except FileNotFoundError:
            if directory not in self._known:
                raise
            self._known.discard(directory)
            self.ensure(directory)
            return opener()

    def sync(self, directory: str) -> None:
        """Make `directory`'s new or renamed entries survive a crash (with `fsync`)."""
        if self.fsync:
            fsync_dir(directory)

    def _make(self, directory: str) -> None:
        if os.path.isdir(directory):
            return
        missing: list[str] = []
        current = directory
        while not os.path.isdir(current):
            missing.append(current)
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        for path in reversed(missing):
            try:
                os.mkdir(path)
            except FileExistsError:
                if not os.path.isdir(path):
                    raise StorageError(
                        f"cannot create directory {path}: a file is in the way"
                    ) from None
                continue  # another writer made it; they fsync the parent
            except OSError as exc:
                raise StorageError(f"cannot create directory {path}: {os_reason(exc)}") from exc
            self.sync(os.path.dirname(path))


def fsync_dir(directory: str) -> None:
    """Make new or renamed entries in `directory` survive a crash."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError as exc:
        raise StorageError(f"cannot open directory {directory}: {os_reason(exc)}") from exc
    try:
        os.fsync(fd)
    except OSError as exc:
        # Some filesystems cannot fsync a directory; there is nothing more we can do there.
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise StorageError(f"cannot fsync directory {directory}: {os_reason(exc)}") from exc
    finally:
        os.close(fd)
