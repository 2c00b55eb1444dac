"""The ownership lease, proven with real processes.

Process A runs the agent and blocks inside its one tool; process B is started on the same
session/agent. A live A refuses B before B runs anything (the side-effect log shows A's pid
only); a crashed A is taken over; a hung A is taken over once its lease expires; and a retry of
A's own invocation id takes over at once. checkpoint.json keeps exactly the spec's fields.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.system.crash import crash_harness as h
from tests.system.crash import lease_child

CHILD = str(Path(lease_child.__file__))
SESSION, AGENT = "lease-job", "worker"
SPEC_FIELDS = {
    "position",
    "cycle_index",
    "schema_version",
    "created_at",
    "message_count",
    "agent_id",
    "execution_status",
}


class Run:
    def __init__(self, tmp: Path, children: Any) -> None:
        self.tmp, self.children = tmp, children
        self.store = tmp / "store"
        self.log = tmp / "side-effects.log"
        self.gate = tmp / "gate"
        self.env = h.child_env(None, tmp)
        self.agent_dir = self.store / f"session_{SESSION}" / "agents" / f"agent_{AGENT}"

    def spawn(
        self, invocation_id: str | None = None, lease_seconds: float = 30.0, via: tuple = ()
    ) -> Any:
        """Start lease_child.py (through the command `via`, e.g. unshare, if given)."""
        args = {
            "dir": str(self.store),
            "session_id": SESSION,
            "agent_id": AGENT,
            "invocation_id": invocation_id,
            "lease_seconds": lease_seconds,
            "log": str(self.log),
            "gate": str(self.gate),
        }
        return self.children.start([*via, sys.executable, CHILD, json.dumps(args)], self.env)

    def runs(self) -> list[int]:
        """Pids of the tool runs, in order."""
        if not self.log.exists():
            return []
        return [int(line.split()[0]) for line in self.log.read_text().splitlines()]

    def wait_in_tool(self, proc: Any, count: int = 1) -> None:
        deadline = time.monotonic() + 60
        while len(self.runs()) < count:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the child never reached its tool"
            time.sleep(0.01)

    def lease(self) -> dict[str, Any]:
        return json.loads((self.agent_dir / "lease.json").read_text())

    def bookmark_fields(self) -> set[str]:
        return set(json.loads((self.agent_dir / "checkpoint.json").read_text()))


def finish(proc: Any) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err


def test_a_live_owner_refuses_a_second_writer_before_it_runs_anything(
    tmp_path: Path, children: Any
) -> None:
    run = Run(tmp_path, children)
    a = run.spawn(lease_seconds=600)  # no renewal while B runs: the store must stay unchanged
    run.wait_in_tool(a)
    before = {p.name: p.read_bytes() for p in run.agent_dir.rglob("*.json")}
    code, _, err = finish(run.spawn())
    assert code == lease_child.IN_USE_EXIT, err
    assert "AgentInUseError" in err and "in use by another process" in err, err
    assert f"pid {a.pid}" in err and run.lease()["expires_at"] in err, err
    # B ran nothing and wrote nothing: the tool ran in A only, the store is byte-identical.
    assert run.runs() == [a.pid]
    assert {p.name: p.read_bytes() for p in run.agent_dir.rglob("*.json")} == before
    run.gate.touch()
    code, out, err = finish(a)
    assert code == 0, err
    assert json.loads(out)["text"] == "Shipped o-1."
    assert run.runs() == [a.pid]
    assert run.bookmark_fields() == SPEC_FIELDS
    assert run.lease()["released"] is True


def test_a_crashed_owner_on_this_machine_is_taken_over_at_once(
    tmp_path: Path, children: Any
) -> None:
    run = Run(tmp_path, children)
    a = run.spawn()
    run.wait_in_tool(a)
    a.send_signal(signal.SIGKILL)
    a.wait()
    assert run.lease()["released"] is False  # A died holding it
    run.gate.touch()
    b = run.spawn()
    code, out, err = finish(b)
    assert code == 0, err
    assert json.loads(out) == {"text": "Shipped o-1.", "resumed": True}
    # The in-flight tool is retried once by the new owner (the spec's "keep tools idempotent").
    assert run.runs() == [a.pid, b.pid]
    assert run.bookmark_fields() == SPEC_FIELDS


# A new pid namespace, as another container on the same host has: the same boot id, other pids.
# --kill-child: the child (pid 1 in there) dies with unshare, so the fixture's kill reaches it.
UNSHARE = ("unshare", "--pid", "--fork", "--kill-child", "--mount-proc")


def test_a_live_owner_is_refused_from_another_pid_namespace(tmp_path: Path, children: Any) -> None:
    """A's pid does not exist in B's namespace; A is alive all the same, so B waits."""
    probe = subprocess.run([*UNSHARE, "true"], capture_output=True, text=True)
    assert probe.returncode == 0, f"unshare cannot make a pid namespace here: {probe.stderr}"
    run = Run(tmp_path, children)
    a = run.spawn(lease_seconds=600)
    run.wait_in_tool(a)
    b = run.spawn(lease_seconds=600, via=UNSHARE)
    deadline = time.monotonic() + 60
    while b.poll() is None and len(run.runs()) < 2:  # refused, or (wrongly) running the tool
        assert time.monotonic() < deadline, "the second writer neither ran nor was refused"
        time.sleep(0.01)
    assert run.runs() == [a.pid], "a live owner's tool ran a second time from another namespace"
    code, _, err = finish(b)
    assert code == lease_child.IN_USE_EXIT, err
    assert f"pid {a.pid}" in err, err
    run.gate.touch()
    code, out, err = finish(a)
    assert code == 0, err
    assert json.loads(out)["text"] == "Shipped o-1."
    assert run.runs() == [a.pid]


def test_a_hung_owner_is_taken_over_after_its_lease_expires(tmp_path: Path, children: Any) -> None:
    run = Run(tmp_path, children)
    a = run.spawn(lease_seconds=1.5)
    run.wait_in_tool(a)
    os.kill(a.pid, signal.SIGSTOP)  # alive but silent: its lease stops being renewed
    code, _, err = finish(run.spawn(lease_seconds=1.5))
    assert code == lease_child.IN_USE_EXIT, err
    expires = datetime.fromisoformat(run.lease()["expires_at"].replace("Z", "+00:00"))
    while datetime.now(UTC) <= expires:
        time.sleep(0.05)
    run.gate.touch()
    b = run.spawn(lease_seconds=1.5)
    code, out, err = finish(b)
    assert code == 0, err
    assert json.loads(out)["text"] == "Shipped o-1."
    assert run.runs() == [a.pid, b.pid]
    assert run.lease()["pid"] == b.pid
    # A wakes up: it lost the lease and is refused before it writes its stale tool result.
    after_b = {p.name: p.read_bytes() for p in run.agent_dir.rglob("message_*.json")}
    os.kill(a.pid, signal.SIGCONT)
    code, _, err = finish(a)
    assert code == lease_child.CONFLICT_EXIT, err
    assert {p.name: p.read_bytes() for p in run.agent_dir.rglob("message_*.json")} == after_b


def test_a_retry_of_the_same_invocation_takes_over_its_own_lease_at_once(
    tmp_path: Path, children: Any
) -> None:
    run = Run(tmp_path, children)
    a = run.spawn(invocation_id="exec-1#slice#0")
    run.wait_in_tool(a)
    os.kill(a.pid, signal.SIGSTOP)  # like a timed-out Lambda: its lease is still live
    code, _, err = finish(run.spawn(invocation_id="exec-2"))
    assert code == lease_child.IN_USE_EXIT, err
    assert "exec-1#slice#0" in err
    run.gate.touch()
    b = run.spawn(invocation_id="exec-1#slice#0")
    code, out, err = finish(b)
    assert code == 0, err
    assert json.loads(out) == {"text": "Shipped o-1.", "resumed": True}
    assert run.runs() == [a.pid, b.pid]


@pytest.mark.parametrize("content", [b"{not json", b'{"owner": 3}'])
def test_an_unreadable_lease_is_taken_over_with_a_warning(
    tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture, children: Any
) -> None:
    from elsai import Agent
    from elsai.agent import AgentConfig
    from elsai.models import ScriptedModel
    from elsai.session import FileSessionManager

    run = Run(tmp_path, children)
    run.agent_dir.mkdir(parents=True)
    (run.agent_dir / "lease.json").write_bytes(content)
    manager = FileSessionManager(session_id=SESSION, storage_dir=str(run.store))
    agent = Agent(
        model=ScriptedModel(["hi"]), config=AgentConfig(agent_id=AGENT, session_manager=manager)
    )
    assert str(agent("hello")) == "hi"
    assert "unreadable lease" in caplog.text
    assert run.lease()["released"] is True
