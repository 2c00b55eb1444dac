"""What a stored lease.json lets the next invocation do.

An owner's pid is judged only where it names the same process: the same boot id and the same
pid namespace (containers on one host share the boot id, not pid numbers). Otherwise, and for
leases written before the namespace was recorded, the lease is waited out. A lease that cannot
be understood (bad timestamps, huge pids, wrong types) is unreadable and taken over at once,
like garbage JSON; it never blocks the agent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.errors import AgentInUseError
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager

SESSION, AGENT = "s", "a"


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _dead_pid() -> int:
    """The pid of a process that has ended and been reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _lease(**fields: Any) -> dict[str, Any]:
    """A lease held by a dead process on this machine, live for another minute."""
    now = datetime.now(UTC)
    with open("/proc/sys/kernel/random/boot_id") as f:
        boot_id = f.read().strip()
    return {
        "schema_version": "1.0",
        "owner": "someone-else",
        "invocation_id": "inv-other",
        "pid": _dead_pid(),
        "host": "here",
        "boot_id": boot_id,
        "pid_namespace": os.readlink("/proc/self/ns/pid"),
        "acquired_at": _stamp(now),
        "renewed_at": _stamp(now),
        "expires_at": _stamp(now + timedelta(minutes=1)),
        "released": False,
        **fields,
    }


def _lease_path(tmp_path: Path) -> Path:
    return tmp_path / f"session_{SESSION}" / "agents" / f"agent_{AGENT}" / "lease.json"


def _invoke(tmp_path: Path, lease: dict[str, Any] | bytes) -> str:
    """Store `lease`, then run a fresh agent once; its reply text, or AgentInUseError."""
    path = _lease_path(tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(lease if isinstance(lease, bytes) else json.dumps(lease).encode())
    manager = FileSessionManager(session_id=SESSION, storage_dir=str(tmp_path))
    agent = Agent(
        model=ScriptedModel(["hi"]), config=AgentConfig(agent_id=AGENT, session_manager=manager)
    )
    return str(agent("hello"))


def _held_by_us(tmp_path: Path) -> bool:
    stored = json.loads(_lease_path(tmp_path).read_text())
    return stored["pid"] == os.getpid() and stored["released"] is True


def test_a_dead_owner_in_this_pid_namespace_is_taken_over_at_once(tmp_path: Path) -> None:
    assert _invoke(tmp_path, _lease()) == "hi"
    assert _held_by_us(tmp_path)


@pytest.mark.parametrize(
    "namespace",
    [{"pid_namespace": "pid:[4026531999]"}, {"pid_namespace": ""}, {}],
    ids=["another_namespace", "unknown_namespace", "written_before_namespaces"],
)
def test_a_dead_looking_owner_elsewhere_is_waited_out(
    tmp_path: Path, namespace: dict[str, str]
) -> None:
    """Same boot id, a pid that is gone here: in another namespace it may be a live process."""
    lease = _lease(**namespace)
    if not namespace:
        del lease["pid_namespace"]  # a lease from a version that did not record it
    with pytest.raises(AgentInUseError, match="in use by another process"):
        _invoke(tmp_path, lease)
    assert json.loads(_lease_path(tmp_path).read_text()) == lease  # nothing was written
    past = datetime.now(UTC) - timedelta(seconds=1)
    assert _invoke(tmp_path, {**lease, "expires_at": _stamp(past)}) == "hi"  # once expired
    assert _held_by_us(tmp_path)


def _future() -> str:
    return _stamp(datetime.now(UTC) + timedelta(minutes=1))


UNREADABLE = {
    "expires_at_soon": {"expires_at": "soon"},
    "expires_at_naive": {"expires_at": _future().rstrip("Z")},
    "renewed_at_naive": {"renewed_at": "2030-01-01T00:00:00"},
    "expires_at_number": {"expires_at": 1893456000},
    "expires_at_out_of_range": {"expires_at": "9999-12-31T23:59:59-23:59"},
    "pid_huge": {"pid": 2**70},
    "pid_zero": {"pid": 0},
    "pid_negative": {"pid": -1},
    "pid_string": {"pid": "123"},
    "pid_float": {"pid": 123.0},
    "released_string": {"released": "no"},
    "boot_id_number": {"boot_id": 7},
    "owner_list": {"owner": ["x"]},
    "host_null": {"host": None},
}


@pytest.mark.parametrize("bad", list(UNREADABLE.values()), ids=list(UNREADABLE))
def test_a_lease_that_cannot_be_understood_is_taken_over_with_a_warning(
    tmp_path: Path, bad: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """Otherwise live (held by this very process, for another minute), but unreadable."""
    lease = {**_lease(pid=os.getpid()), **bad}
    del lease["pid_namespace"]  # the rest is a lease any version would read
    assert _invoke(tmp_path, lease) == "hi"
    assert "unreadable lease" in caplog.text
    assert _held_by_us(tmp_path)
