"""Where the console reads from: a session store (read-only) and the jobs API (through its client).

The CLI opens both from its flags and hands them over; the console never parses flags, so the
same objects serve tests and `elsai console` alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from elsai.client import JobsApi
from elsai.session.storage.base import StorageBackend


class SessionStore(Protocol):
    """A store to read: the byte backend, where it is, and keys with modification times."""

    storage: StorageBackend
    location: str

    def times(self, prefix: str) -> dict[str, float]:
        """Every key under `prefix` with its modification time (epoch seconds)."""
        ...


@dataclass
class StoreView:
    """A `SessionStore` from its parts (tests, and stores the CLI did not open)."""

    storage: StorageBackend
    location: str
    list_times: Callable[[str], dict[str, float]]

    def times(self, prefix: str) -> dict[str, float]:
        """Every key under `prefix` with its modification time."""
        return self.list_times(prefix)


@dataclass
class Sources:
    """What this console shows: sessions from `store`, jobs from `jobs` (either may be absent)."""

    store: SessionStore | None = None
    jobs: JobsApi | None = None
