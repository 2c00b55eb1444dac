"""Session managers: a session id bound to a storage backend.

`FileSessionManager` and `S3SessionManager` differ only in the backend they build; the layout
(elsai.session.layout) and the durability rules (elsai.session.write.binding) are shared. The
manager holds the user-facing knobs; `bind_agent` freezes them into the binding's
`BindingSettings`, so the write path never reads the manager.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from elsai.ids import validate_id
from elsai.session.layout import keys
from elsai.session.layout.records import SessionRecord, load
from elsai.session.storage.base import StorageBackend
from elsai.session.write.binding import SessionBinding
from elsai.session.write.bound import BoundAgent
from elsai.session.write.lease import DEFAULT_LEASE_SECONDS
from elsai.session.write.session_record import create_session_record
from elsai.session.write.settings import BindingSettings


class SessionManager:
    """Persists agents of one session. Several agents (unique agent_ids) may share a session."""

    # The knobs below are read when an agent is bound (`binding_settings`); a binding
    # already made keeps the values it was bound with.

    #: How long an agent's ownership lease lives without renewal (elsai.session.write.lease): a
    #: crashed writer on another machine blocks the agent this long. None turns leases off.
    lease_seconds: float | None = DEFAULT_LEASE_SECONDS
    #: Let the after_tools bookmark PUT overlap the next model call (elsai.session.write.pending);
    #: False writes every bookmark in line, before the step that follows it.
    overlap_bookmark: bool = True
    #: Opt-in: with `overlap_bookmark`, let the after_model bookmark PUT overlap the tools and
    #: the write of their result too, saving one round trip per tool batch. The trade: a crash
    #: inside a tool before that PUT lands (a tool that kills its process at once) finds the
    #: previous bookmark, so the orphan toolUse is answered "interrupted" instead of the tool
    #: running again. The default (False) writes it before any tool starts, as the spec's
    #: "recover mid-tool crashes" needs.
    overlap_after_model: bool = False

    def __init__(self, session_id: str, storage: StorageBackend) -> None:
        self.session_id: str = validate_id(session_id, "session_id")
        self.storage = storage
        self._lock = threading.Lock()

    def bind_agent(self, agent: BoundAgent) -> SessionBinding:
        """Load `agent`'s stored conversation into it and return its persistence binding."""
        return SessionBinding(self.storage, self.session_id, agent, self.binding_settings())

    def binding_settings(self) -> BindingSettings:
        """This manager's knobs as they stand now, frozen for one binding."""
        return BindingSettings(
            lease_seconds=self.lease_seconds,
            overlap_bookmark=bool(self.overlap_bookmark),
            overlap_after_model=bool(self.overlap_after_model),
        )

    def ensure_session(self) -> SessionRecord:
        """Create session.json on first use; read it otherwise."""
        key = keys.session_key(self.session_id)
        with self._lock:
            found = self.storage.read(key)
            if found is not None:
                return load(SessionRecord, found.data, self.storage.describe(key))
            return self.create_session_record()

    def create_session_record(self) -> SessionRecord:
        """Write session.json; another process may create it first (same content, nothing lost)."""
        return create_session_record(self.storage, self.session_id)

    # -- orchestrator state (Graph / Swarm) -----------------------------------------------

    def read_multi_agent(self) -> tuple[dict[str, Any], str] | None:
        """The orchestrator cursor and its version, or None before the first write."""
        import json

        found = self.storage.read(keys.multi_agent_key(self.session_id))
        if found is None:
            return None
        return json.loads(found.data), found.version

    def write_multi_agent(self, state: dict[str, Any], expected_version: str | None) -> str:
        """Replace the orchestrator cursor if unchanged since `expected_version`; the new version."""
        import json

        self.ensure_session()
        return self.storage.replace(
            keys.multi_agent_key(self.session_id),
            json.dumps(state, indent=1).encode(),
            expected_version=expected_version,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(session_id={self.session_id!r})"


class FileSessionManager(SessionManager):
    """Sessions as files under `storage_dir` (atomic writes, exclusive creates).

    With `fsync=False` the bookmarks are written in line (`overlap_bookmark` starts False):
    without an fsync, a bookmark write is a few system calls of Python work that holds the
    GIL, so running it in the background overlaps nothing and only adds a thread hand-off
    (about a fifth of this layer's time per cycle). With `fsync=True` the write waits on the
    disk outside the GIL, and overlapping it pays.
    """

    def __init__(
        self, session_id: str, storage_dir: str | None = None, *, fsync: bool = True
    ) -> None:
        """`fsync=False` trades power-loss durability for speed; see FileStorage."""
        import os

        from elsai.session.storage.file import FileStorage

        validate_id(session_id, "session_id")
        self.storage_dir: str = storage_dir or os.path.join(os.getcwd(), "sessions")
        super().__init__(session_id, FileStorage(self.storage_dir, fsync=fsync))
        if not fsync:
            self.overlap_bookmark = False  # nothing to overlap (see the class docstring)


class S3SessionManager(SessionManager):
    """Sessions in S3 under `prefix` (conditional PUTs enforce a single writer).

    Honours the standard boto3 configuration, including `AWS_ENDPOINT_URL_S3`. `tagging` is
    the store's tagging policy: the S3 ``Tagging`` a write of a key (relative to `prefix`)
    carries, or None; the caller decides which of its own objects its lifecycle rules find.
    """

    def __init__(
        self,
        session_id: str,
        bucket: str,
        prefix: str = "",
        boto_session: Any = None,
        region_name: str | None = None,
        tagging: Callable[[str], str | None] | None = None,
    ) -> None:
        from elsai.session.storage.s3 import S3Storage

        validate_id(session_id, "session_id")
        self.bucket = bucket
        self.prefix = prefix
        super().__init__(
            session_id,
            S3Storage(
                bucket=bucket,
                prefix=prefix,
                boto_session=boto_session,
                region_name=region_name,
                tagging=tagging,
            ),
        )
