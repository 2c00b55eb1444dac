"""The ownership lease: one live writer per agent, refused before it runs anything.

Conditional writes already stop a second writer from clobbering the store, but only at its
first write, after it may have re-run a pending tool. The lease closes that gap: an invocation
takes `lease.json` (beside checkpoint.json) with a conditional write before the resume gate
runs, a background thread renews it while the model and tools run, and it is released when
the invocation ends. Another process that finds a live lease gets `AgentInUseError`.

A crashed owner and a slow one look alike from outside, so a lease expires: once
`expires_at` has passed the next invocation takes it over. Two shortcuts spare the wait when
it is safe: a retry of the same `invocation_id` (the same Step Functions slice) takes over its
own lease at once, and an owner whose process is gone is known to be dead, but only when its
pid is provably comparable: the same boot id and the same pid namespace (containers on one host
share the boot id, not pid numbers). A lease without a pid namespace (written by an earlier
version, or where /proc has none) is never judged by pid: it is waited out.

A lease that cannot be understood (not JSON, wrong types, a timestamp without a timezone, a pid
out of range) is unreadable: it says nothing about who is alive, so it is taken over.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from datetime import UTC, datetime, timedelta
from typing import ClassVar, NoReturn

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from elsai.errors import AgentInUseError
from elsai.session.layout import keys
from elsai.session.storage.base import SessionConflictError, StorageBackend, StoredObject

logger: logging.Logger = logging.getLogger("elsai.session")

DEFAULT_LEASE_SECONDS = 30.0
LEASE_SCHEMA_VERSION = "1.0"
MAX_PID = 2**31 - 1  # pid_t: a larger number is no process, and os.kill overflows on it


class LeaseRecord(BaseModel):
    """lease.json: who holds the agent and until when (UTC, millisecond ISO-8601).

    Strict: a field of the wrong type or a time that is not an aware ISO-8601 timestamp makes
    the whole lease unreadable, never an error on every later attempt to take it.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True, strict=True)

    schema_version: str = LEASE_SCHEMA_VERSION
    owner: str
    invocation_id: str | None = None
    pid: int = Field(ge=1, le=MAX_PID)
    host: str
    boot_id: str = ""
    #: The owner's pid namespace ("pid:[inode]"); "" when unknown (earlier versions).
    pid_namespace: str = ""
    acquired_at: str
    renewed_at: str
    expires_at: str
    released: bool = False

    @field_validator("acquired_at", "renewed_at", "expires_at")
    @classmethod
    def _aware_timestamp(cls, value: str) -> str:
        _parse_time(value)
        return value

    def expiry(self) -> datetime:
        """When the lease lapses unless renewed."""
        return _parse_time(self.expires_at)


def _now() -> datetime:
    return datetime.now(UTC)


def _format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _parse_time(value: str) -> datetime:
    """An aware ISO-8601 timestamp, in UTC; ValueError for anything else."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if moment.tzinfo is None or moment.utcoffset() is None:
            raise ValueError("a timestamp without a timezone")
        return moment.astimezone(UTC)
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"not an ISO-8601 timestamp with a timezone: {exc}") from None


def _boot_id() -> str:
    """Identifies this machine boot (a Lambda microVM has its own), so pids are comparable."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return ""


def _pid_namespace() -> str:
    """This process's pid namespace ("pid:[inode]"): pids mean the same only within one."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def _process_gone(pid: int) -> bool:
    """True if no live process has `pid` on this machine (a zombie counts as gone)."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def _same_pid_space(current: LeaseRecord) -> bool:
    """Whether the owner's pid names a process here: same boot and pid namespace, both known.

    Otherwise a live owner in another container could look dead.
    """
    same_boot = bool(current.boot_id) and current.boot_id == _boot_id()
    return same_boot and bool(current.pid_namespace) and current.pid_namespace == _pid_namespace()


class OwnershipLease:
    """One agent binding's lease: acquire before running, renew while running, release after."""

    def __init__(
        self,
        storage: StorageBackend,
        session_id: str,
        agent_id: str,
        *,
        seconds: float = DEFAULT_LEASE_SECONDS,
        loaded: StoredObject | None = None,
    ) -> None:
        """`loaded` is lease.json as read with the rest of the agent (None if absent)."""
        if seconds <= 0:
            raise ValueError(f"lease seconds must be positive, got {seconds!r}")
        self.storage = storage
        self.session_id: str = session_id
        self.agent_id: str = agent_id
        self.key: str = keys.lease_key(session_id, agent_id)
        self.seconds: float = float(seconds)
        self.owner: str = uuid.uuid4().hex
        self.lost: bool = False
        self._seen = loaded  # the lease as of the state this binding holds in memory
        self._held: LeaseRecord | None = None
        self._version: str | None = None
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    # -- acquire -------------------------------------------------------------------------

    def acquire(self, invocation_id: str | None) -> None:
        """Take the lease or raise; nothing is written if another live process holds it.

        AgentInUseError: a live owner holds it. SessionConflictError: another process ran this
        agent since it was loaded here, so what this binding loaded is stale.
        """
        if self._held is not None:
            return
        found = self._seen
        current = self._parse(found)
        if found is not None and current is not None and not self._may_take(current, invocation_id):
            latest = self.storage.read(self.key)  # what this binding loaded may be old news
            if latest is not None and latest.version == found.version:
                raise self._in_use(current)
            self._refuse_changed(latest, invocation_id)
        record = self._new_record(invocation_id)
        data = record.model_dump_json(indent=2).encode()
        try:
            if found is None:
                version = self.storage.create(self.key, data)
            else:
                version = self.storage.replace(self.key, data, expected_version=found.version)
        except SessionConflictError:
            self._refuse_changed(self.storage.read(self.key), invocation_id)
        self._held, self._version, self.lost = record, version, False
        self._start_renewer()

    def _refuse_changed(self, latest: StoredObject | None, invocation_id: str | None) -> NoReturn:
        """Someone wrote the lease since this binding loaded: say who, and why we stop."""
        current = self._parse(latest)
        if current is not None and not self._may_take(current, invocation_id):
            raise self._in_use(current)
        who = f" (pid {current.pid} on {current.host})" if current is not None else ""
        raise SessionConflictError(
            f"agent {self.agent_id!r} in session {self.session_id!r} was run by another "
            f"process{who} after this Agent loaded it, so its loaded conversation is stale; "
            "nothing was run or written. Rebuild the Agent with the same ids and invoke again."
        )

    def _may_take(self, current: LeaseRecord, invocation_id: str | None) -> bool:
        if current.released or current.owner == self.owner:
            return True
        if invocation_id is not None and current.invocation_id == invocation_id:
            return True  # a retry of the same slice: its previous attempt is over
        if _now() >= current.expiry():
            return True  # the owner stopped renewing: it died or hung
        return _same_pid_space(current) and _process_gone(current.pid)

    def _parse(self, found: StoredObject | None) -> LeaseRecord | None:
        if found is None:
            return None
        try:
            return LeaseRecord.model_validate_json(found.data)
        except ValidationError as exc:
            # The lease only says who is alive; the conditional writes still keep the store
            # consistent, so an unreadable lease is taken over rather than blocking forever.
            logger.warning(
                "ignoring unreadable lease %s (%d problems); taking it over",
                self.storage.describe(self.key),
                exc.error_count(),
            )
            return None

    def _in_use(self, current: LeaseRecord) -> AgentInUseError:
        invocation = f", invocation {current.invocation_id!r}" if current.invocation_id else ""
        return AgentInUseError(
            f"agent {self.agent_id!r} in session {self.session_id!r} is in use by another "
            f"process (pid {current.pid} on {current.host}{invocation}) until "
            f"{current.expires_at}; nothing was run or written. Wait for it to finish and "
            "invoke again; if that process died, its lease expires at that time and the next "
            "invoke takes over."
        )

    def _new_record(self, invocation_id: str | None) -> LeaseRecord:
        now = _now()
        stamp = _format_time(now)
        return LeaseRecord(
            owner=self.owner,
            invocation_id=invocation_id,
            pid=os.getpid(),
            host=socket.gethostname(),
            boot_id=_boot_id(),
            pid_namespace=_pid_namespace(),
            acquired_at=stamp,
            renewed_at=stamp,
            expires_at=_format_time(now + timedelta(seconds=self.seconds)),
        )

    # -- renew and release ---------------------------------------------------------------

    def _start_renewer(self) -> None:
        self._stop.clear()
        self._renewer = threading.Thread(
            target=self._renew_loop, name=f"elsai-lease-{self.agent_id}", daemon=True
        )
        self._renewer.start()

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            if not self._write_renewal():
                return

    def _write_renewal(self) -> bool:
        held = self._held
        if held is None:
            return False
        now = _now()
        record = held.model_copy(
            update={
                "renewed_at": _format_time(now),
                "expires_at": _format_time(now + timedelta(seconds=self.seconds)),
            }
        )
        try:
            self._version = self.storage.replace(
                self.key, record.model_dump_json(indent=2).encode(), expected_version=self._version
            )
        except SessionConflictError:
            self.lost = True
            logger.error(
                "agent %r in session %r: another process took over the lease %s; this "
                "invocation stops at its next boundary",
                self.agent_id,
                self.session_id,
                self.storage.describe(self.key),
            )
            return False
        except Exception as exc:  # a transient storage error: try again next period
            logger.warning("could not renew lease %s: %s", self.storage.describe(self.key), exc)
            return True
        self._held = record
        return True

    def check(self) -> None:
        """Raise SessionConflictError if another process took the lease from under us."""
        if self.lost:
            raise SessionConflictError(
                f"agent {self.agent_id!r} in session {self.session_id!r}: another process took "
                "over the ownership lease while this invocation ran (it stalled past "
                f"{self.seconds:g} s without renewing); stopping before writing more. "
                "Rebuild the Agent and invoke again."
            )

    def release(self) -> None:
        """Stop renewing and mark the lease released, so the next owner need not wait."""
        held = self._held
        if held is None:
            return
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
        self._held = self._renewer = None
        ours = StoredObject(
            data=held.model_dump_json(indent=2).encode(), version=self._version or ""
        )
        if self.lost:
            self._seen = ours  # stale on purpose: the next acquire sees the takeover
            return
        record = held.model_copy(update={"released": True, "expires_at": _format_time(_now())})
        data = record.model_dump_json(indent=2).encode()
        try:
            version = self.storage.replace(self.key, data, expected_version=self._version)
        except Exception as exc:  # the invocation's own outcome matters more than this write
            logger.warning("could not release lease %s: %s", self.storage.describe(self.key), exc)
            self._seen = ours
            return
        self._seen = StoredObject(data=data, version=version)
