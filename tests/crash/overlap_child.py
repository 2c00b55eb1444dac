"""Child for the overlap crash test: killed while the after_tools bookmark PUT is in flight.

Run as `python overlap_child.py '<json args>'`. The storage wrapper logs (fsync'd, in order)
when each write starts and ends, and holds every checkpoint.json write for a moment before
sending it, so the next model call really overlaps it. The scripted model logs each call and,
at call `kill_at` (counted from 1), kills its own process with SIGKILL in one of two states:

- "in_flight": the bookmark write has started and has not landed (the overlap itself);
- "landed": it waits for that write to land, then dies before the reply is written.

`kill_at` 0 runs to the end (the recovery run).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import Any

from child_agent import append_line

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager, S3SessionManager
from elsai.session.storage.base import StorageBackend, StoredObject

CYCLES = 4
HOLD_S = 0.05  # how long a bookmark write waits before it is sent


class LoggedStorage(StorageBackend):
    """Delegates to the real backend; logs write start/end, holds bookmark writes briefly."""

    def __init__(self, inner: StorageBackend, log: str) -> None:
        self.inner, self.log = inner, log
        #: Bookmark writes made from the write-behind thread: started, landed.
        self.behind = {"start": 0, "end": 0}
        self.changed = threading.Condition()

    def read(self, key: str) -> StoredObject | None:
        return self.inner.read(key)

    def read_many(self, keys: Any) -> list[StoredObject | None]:
        return self.inner.read_many(keys)

    def list(self, prefix: str) -> list[str]:
        return self.inner.list(prefix)

    def create(self, key: str, data: bytes) -> str:
        return self._write(key, lambda: self.inner.create(key, data))

    def replace(self, key: str, data: bytes, *, expected_version: str | None) -> str:
        return self._write(
            key, lambda: self.inner.replace(key, data, expected_version=expected_version)
        )

    def _write(self, key: str, perform: Any) -> str:
        name = key.rsplit("/", 1)[-1]
        if name == "lease.json":
            return str(perform())
        thread = threading.current_thread().name
        behind = thread.startswith("elsai-write-behind")
        append_line(self.log, f"start {name} {thread}")
        if behind:
            self._count("start")
        if name == "checkpoint.json":
            time.sleep(HOLD_S)
        version = perform()
        append_line(self.log, f"end {name}")
        if behind:
            self._count("end")
        return str(version)

    def _count(self, what: str) -> None:
        with self.changed:
            self.behind[what] += 1
            self.changed.notify_all()

    def wait_for(self, what: str, count: int) -> None:
        with self.changed:
            self.changed.wait_for(lambda: self.behind[what] >= count, timeout=10)


def main(args: dict[str, Any]) -> int:
    append_line(args["log"], "begin")
    if args["backend"] == "file":
        manager: Any = FileSessionManager(session_id="overlap", storage_dir=args["storage_dir"])
    else:
        manager = S3SessionManager(
            session_id="overlap", bucket=args["bucket"], prefix=args["prefix"]
        )
    storage = manager.storage = LoggedStorage(manager.storage, args["log"])
    calls = 0

    def reply(request: Any) -> dict[str, Any] | str:
        nonlocal calls
        calls += 1
        done = sum(1 for m in request.messages if m["role"] == "assistant")
        append_line(args["log"], f"model {done}")
        if calls == args["kill_at"]:
            # Call N follows N-1 tool batches, so N-1 after_tools bookmarks went to the background.
            storage.wait_for("end" if args["state"] == "landed" else "start", calls - 1)
            append_line(args["log"], f"kill {args['state']}")
            os.kill(os.getpid(), signal.SIGKILL)
        if done >= CYCLES:
            return "finished"
        use = {"toolUseId": f"t{done}", "name": "step", "input": {"n": done}}
        return {"role": "assistant", "content": [{"toolUse": use}]}

    @tool
    def step(n: int) -> str:
        """One step with a side effect (logged)."""
        append_line(args["log"], f"tool t{n}")
        return f"step {n} done"

    agent = Agent(
        model=ScriptedModel([reply] * (2 * CYCLES + 2)),
        tools=[step],
        config=AgentConfig(
            agent_id="worker",
            session_manager=manager,
            checkpoint=CheckpointConfig(position=args["position"]),
        ),
    )
    result = agent("run the steps", invocation_id="inv-1")
    append_line(args["log"], f"result {result.stop_reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
