"""Child for the overlap crash tests: killed while an overlapped bookmark PUT is in flight.

Run as `python overlap_child.py '<json args>'`. The storage wrapper logs (fsync'd, in order)
when each write starts and ends (a bookmark's start is preceded by `bookmark <position>`), and
holds every checkpoint.json write for a moment before sending it, so the step after its
boundary really overlaps it. `kill_in` says where the process kills itself with SIGKILL:

- "model" (default): at model call `kill_at` (from 1), about the after_tools bookmark;
- "tool": inside tool call `kill_at` (from 1), about the after_model bookmark just before it;
- "result": right after the result of tool call `kill_at` is stored, while the after_model
  bookmark before it is held in flight (the one order an overlapped after_model allows).

`state` "in_flight": that bookmark write has started and not landed; "landed": the process
waits for it to land, then dies. `kill_at` 0 runs to the end (the recovery run); `overlap`
false writes every bookmark in line; `overlap_after_model` true opts in to the after_model
bookmark overlapping the tools (off by default, as in the SDK).
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
        #: Bookmark writes made from the write-behind thread, by position: started, landed.
        self.behind: dict[tuple[str, str], int] = {}
        self.changed = threading.Condition()
        #: Set by "result" runs: (message file name that triggers the kill, bookmarks to hold).
        self.kill_after: str | None = None
        self.hold_after_model_from = self.held = 0

    def read(self, key: str) -> StoredObject | None:
        return self.inner.read(key)

    def read_many(self, keys: Any) -> list[StoredObject | None]:
        return self.inner.read_many(keys)

    def list(self, prefix: str) -> list[str]:
        return self.inner.list(prefix)

    def create(self, key: str, data: bytes) -> str:
        return self._write(key, lambda: self.inner.create(key, data))

    def replace(self, key: str, data: bytes, *, expected_version: str | None) -> str:
        position = json.loads(data)["position"] if key.endswith("checkpoint.json") else ""
        return self._write(
            key, lambda: self.inner.replace(key, data, expected_version=expected_version), position
        )

    def _write(self, key: str, perform: Any, position: str = "") -> str:
        name = key.rsplit("/", 1)[-1]
        if name == "lease.json":
            return str(perform())
        thread = threading.current_thread().name
        behind = thread.startswith("elsai-write-behind")
        if name == self.kill_after:
            # The write-behind thread may not have been scheduled yet: this result write is
            # to pass the held bookmark in flight, so let that bookmark start first.
            self.wait_for("start", "after_model", self.held)
        if position:
            append_line(self.log, f"bookmark {position}")
        append_line(self.log, f"start {name} {thread}")
        if behind:
            self._count("start", position)
        if name == "checkpoint.json":
            time.sleep(HOLD_S)
            if position == "after_model" and self.kill_after is not None:
                self.hold_after_model_from -= 1
                if self.hold_after_model_from <= 0:
                    time.sleep(10)  # held in flight until the result write kills the process
        version = perform()
        append_line(self.log, f"end {name}")
        if behind:
            self._count("end", position)
        if name == self.kill_after:
            append_line(self.log, "kill in_flight")
            os.kill(os.getpid(), signal.SIGKILL)
        return str(version)

    def _count(self, what: str, position: str) -> None:
        with self.changed:
            self.behind[what, position] = self.behind.get((what, position), 0) + 1
            self.changed.notify_all()

    def wait_for(self, what: str, position: str, count: int) -> None:
        with self.changed:
            self.changed.wait_for(lambda: self.behind.get((what, position), 0) >= count, 10)

    def die(self, state: str, position: str, count: int) -> None:
        """SIGKILL once the `count`-th `position` bookmark has started (in_flight) or landed."""
        self.wait_for("end" if state == "landed" else "start", position, count)
        append_line(self.log, f"kill {state}")
        os.kill(os.getpid(), signal.SIGKILL)


def main(args: dict[str, Any]) -> int:
    append_line(args["log"], "begin")
    if args["backend"] == "file":
        manager: Any = FileSessionManager(session_id="overlap", storage_dir=args["storage_dir"])
    else:
        manager = S3SessionManager(
            session_id="overlap", bucket=args["bucket"], prefix=args["prefix"]
        )
    manager.overlap_bookmark = args.get("overlap", True)
    manager.overlap_after_model = args.get("overlap_after_model", False)  # the opt-in
    storage = manager.storage = LoggedStorage(manager.storage, args["log"])
    kill_in, kill_at = args.get("kill_in", "model"), args["kill_at"]
    calls = tools = 0
    if kill_in == "result" and kill_at:
        # Tool call N (from 1) follows N after_model bookmarks of this run; hold the N-th.
        storage.hold_after_model_from = storage.held = kill_at
        storage.kill_after = f"message_{args.get('first_index', 0) + 2 * kill_at}.json"

    def reply(request: Any) -> dict[str, Any] | str:
        nonlocal calls
        calls += 1
        done = sum(1 for m in request.messages if m["role"] == "assistant")
        append_line(args["log"], f"model {done}")
        if kill_in == "model" and calls == kill_at:
            # Call N follows N-1 tool batches, so N-1 after_tools bookmarks went to the background.
            storage.die(args["state"], "after_tools", calls - 1)
        if done >= CYCLES:
            return "finished"
        use = {"toolUseId": f"t{done}", "name": "step", "input": {"n": done}}
        return {"role": "assistant", "content": [{"toolUse": use}]}

    @tool
    def step(n: int) -> str:
        """One step with a side effect (logged)."""
        nonlocal tools
        tools += 1
        append_line(args["log"], f"tool t{n}")
        if kill_in == "tool" and tools == kill_at:
            storage.die(args["state"], "after_model", tools)  # the bookmark naming this toolUse
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
