"""Single writer, proven with real processes (beyond what the spec requires).

Two processes bound to the same session/agent: whichever writes second gets a
SessionConflictError (printed, non-zero exit), and nothing already stored changes. A "zombie"
(a process that loaded the session, stalled, and wakes up after another process moved the
session on) is refused at its first write, whether that write is a message create (If-None-Match
/ exclusive create) or a replace of a stored object (If-Match / versioned replace).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.transcripts import assert_valid_transcript
from tests.system.crash import child_agent as child
from tests.system.crash import crash_harness as h

AGENT = h.AGENT_ID


class Harness:
    def __init__(
        self, store: h.Store, env: dict[str, str], tmp: Path, session_id: str, children: Any
    ) -> None:
        self.store, self.env, self.tmp, self.session_id = store, env, tmp, session_id
        self.children = children  # the conftest fixture: kills what is left at teardown

    def args(self, name: str, **extra: Any) -> dict[str, Any]:
        return {
            **self.store.child_args(self.session_id),
            "session_id": self.session_id,
            "agent_id": AGENT,
            "position": "both",
            "ledger": str(self.tmp / "ledger.txt"),
            "writes": str(self.tmp / f"writes-{name}.log"),
            "progress": str(self.tmp / f"progress-{name}.log"),
            "go": str(self.tmp / f"go-{name}"),
            **extra,
        }

    def run(self, name: str, **extra: Any) -> h.ChildRun:
        return h.run_child(self.args(name, **extra), self.env)

    def spawn_holding(self, name: str, steps: list[Any], *, lease: bool = True) -> Any:
        """A child that loads the agent, reports `loaded`, and waits for its go file.

        `lease=False` turns the ownership lease off, to show the conditional writes behind it.
        """
        import sys

        args = self.args(name, mode="hold", steps=steps, lease=lease)
        proc = self.children.start([sys.executable, h.CHILD, json.dumps(args)], self.env)
        deadline = time.monotonic() + 30
        while not any(e["event"] == "loaded" for e in h.read_jsonl(Path(args["progress"]))):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "child never loaded"
            time.sleep(0.01)
        return proc, Path(args["go"])

    def snapshot(self) -> dict[str, bytes]:
        return self.store.snapshot(self.session_id)

    def session(self) -> h.Session:
        return h.Session.parse(self.session_id, self.snapshot())


def follow_up(name: str) -> dict[str, Any]:
    return {"prompt": f"Follow-up from {name}.", "invocation_id": f"inv-{name}"}


def assert_refused(proc: Any) -> str:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == child.CONFLICT_EXIT, (proc.returncode, out, err)
    assert "SessionConflictError" in err, err
    return err


@pytest.mark.parametrize("backend", ["file", "s3"])
def test_two_processes_race_one_wins(
    backend: str, make_store, make_env, tmp_path: Path, children
) -> None:
    """Both processes load the finished job, then both send a follow-up at the same moment."""
    hs = Harness(make_store(backend), make_env(backend), tmp_path, f"race-{backend}", children)
    done = hs.run("setup")
    assert done.returncode == 0, done.stderr
    before = hs.session()
    a, go_a = hs.spawn_holding("A", [follow_up("A")])
    b, go_b = hs.spawn_holding("B", [follow_up("B")])
    go_a.touch()
    go_b.touch()
    outcomes = {}
    for name, proc in (("A", a), ("B", b)):
        out, err = proc.communicate(timeout=60)
        outcomes[name] = (proc.returncode, err)
    codes = sorted(rc for rc, _ in outcomes.values())
    assert codes == [0, child.CONFLICT_EXIT], outcomes
    winner = next(n for n, (rc, _) in outcomes.items() if rc == 0)
    loser = "B" if winner == "A" else "A"
    assert "SessionConflictError" in outcomes[loser][1]

    after = hs.session()
    assert_valid_transcript(after.messages)
    assert after.message_indices == list(range(len(before.messages) + 2))
    assert after.messages[: len(before.messages)] == before.messages
    user_texts = [t for m in after.messages if m["role"] == "user" for t in h.texts(m)]
    assert user_texts.count(follow_up(winner)["prompt"]) == 1
    assert follow_up(loser)["prompt"] not in user_texts
    assert after.bookmark is not None
    assert after.bookmark["execution_status"] == "completed"
    assert after.bookmark["message_count"] == len(after.messages)
    assert f"inv-{winner}" in after.agent["invocation_ids"]
    assert f"inv-{loser}" not in after.agent["invocation_ids"]


# With the ownership lease the zombie is refused when it takes the lease, since B wrote it
# after A loaded; without it, at its first data write. Either way nothing stored changes.
STALE = "loaded conversation is stale"
ZOMBIE_GUARDS = pytest.mark.parametrize("lease", [False, True], ids=["writes", "lease"])


@pytest.mark.parametrize("backend", ["file", "s3"])
@ZOMBIE_GUARDS
def test_zombie_first_write_is_a_create(
    backend: str, lease: bool, make_store, make_env, tmp_path: Path, children
) -> None:
    """A loads the finished job and stalls; B completes a follow-up turn; A wakes up."""
    hs = Harness(
        make_store(backend), make_env(backend), tmp_path, f"zombie-create-{backend}", children
    )
    assert hs.run("setup").returncode == 0
    zombie, go = hs.spawn_holding("A", [follow_up("A")], lease=lease)
    b = hs.run("B", steps=[follow_up("B")])
    assert b.returncode == 0, b.stderr
    settled = hs.snapshot()
    go.touch()
    err = assert_refused(zombie)
    assert STALE in err if lease else ("message_" in err and "already exists" in err)
    assert hs.snapshot() == settled, "the zombie changed stored data"
    writes = h.read_jsonl(tmp_path / "writes-A.log")
    assert writes == [], f"the zombie completed writes: {writes}"
    assert_valid_transcript(hs.session().messages)


@pytest.mark.parametrize("backend", ["file", "s3"])
@ZOMBIE_GUARDS
def test_zombie_first_write_is_a_replace(
    backend: str, lease: bool, make_store, make_env, tmp_path: Path, children
) -> None:
    """The job is paused after its first tool cycle. A loads and stalls; B sends the second
    invocation (its text merges into the stored toolResult message: a replace) and finishes the
    job; A wakes up and tries the same merge against the version it read."""
    hs = Harness(
        make_store(backend), make_env(backend), tmp_path, f"zombie-replace-{backend}", children
    )
    paused = hs.run("setup", steps=[1])
    assert paused.returncode == 0, paused.stderr
    zombie, go = hs.spawn_holding("A", [2], lease=lease)
    b = hs.run("B", steps=[2])
    assert b.returncode == 0, b.stderr
    settled = hs.snapshot()
    b_writes = h.read_jsonl(tmp_path / "writes-B.log")
    assert b_writes[0]["op"] == "replace" and b_writes[0]["key"].endswith("message_2.json"), (
        b_writes
    )
    go.touch()
    err = assert_refused(zombie)
    if lease:
        assert STALE in err
    else:
        assert "message_2.json" in err and "changed since it was read" in err
    assert hs.snapshot() == settled, "the zombie changed stored data"
    assert h.read_jsonl(tmp_path / "writes-A.log") == []
    final = hs.session()
    assert_valid_transcript(final.messages)
    assert final.bookmark["execution_status"] == "completed"
    user_texts = [t for m in final.messages if m["role"] == "user" for t in h.texts(m)]
    assert user_texts.count(child.CONTINUE) == 1
