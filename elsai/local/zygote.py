"""A fork server for the agent children: imports the heavy libraries once, forks per invocation.

Each invocation still gets its own process (killable, its own memory, the handler and the
user's factory imported fresh under the invocation's environment); only boto3, pydantic,
Powertools and elsai are already imported, saving ~1 s per child. Unlike
`multiprocessing`'s forkserver it never re-imports the caller's `__main__`.

Protocol (JSON lines): parent -> server {"id", "event", "env", "cwd", "out", "err"} starts a
child, {"kill": id} SIGKILLs it; server -> parent {"id", "pid"} then {"id", "exit"}
(exit < 0: killed by that signal).
"""

from __future__ import annotations

import importlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any


def _serve() -> None:
    from elsai.local.lambda_child import PRELOAD, run_forked

    for name in PRELOAD:
        importlib.import_module(name)
    out = sys.stdout
    children: dict[int, Any] = {}  # pid -> request id
    by_id: dict[Any, int] = {}
    buffer = b""

    def send(message: dict[str, Any]) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    send({"ready": True})
    stdin_open = True
    while stdin_open or children:
        if stdin_open and select.select([0], [], [], 0.01)[0]:
            chunk = os.read(0, 1 << 20)
            stdin_open = bool(chunk)
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                request = json.loads(line)
                if "kill" in request:
                    pid = by_id.get(request["kill"])
                    if pid in children:
                        os.kill(pid, signal.SIGKILL)
                    continue
                pid = os.fork()
                if pid == 0:  # the child: never returns
                    null = os.open(os.devnull, os.O_RDONLY)
                    os.dup2(null, 0)
                    try:
                        run_forked(
                            request["event"],
                            request["env"],
                            request["cwd"],
                            request["out"],
                            request["err"],
                        )
                    finally:
                        os._exit(3)
                children[pid], by_id[request["id"]] = request["id"], pid
                send({"id": request["id"], "pid": pid})
        elif not stdin_open:
            select.select([], [], [], 0.01)
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            request_id = children.pop(pid)
            by_id.pop(request_id, None)
            send({"id": request_id, "exit": os.waitstatus_to_exitcode(status)})


class Zygote:
    """The parent's handle on one fork server (one per LocalRuntime)."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self._proc = subprocess.Popen([sys.executable, "-m", "elsai.local.zygote"], cwd=root, env=env,
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)  # fmt: skip
        assert self._proc.stdout is not None
        self._ready = threading.Event()  # preloading runs while the caller sets up the rest
        self._lock = threading.Lock()
        self._next = 0
        self._exits: dict[int, tuple[threading.Event, list[int]]] = {}
        self._reader = threading.Thread(target=self._read, args=(self._proc.stdout,), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[bytes]) -> None:
        for line in stream:
            message = json.loads(line)
            if message.get("ready"):
                self._ready.set()
            if "exit" in message:
                with self._lock:
                    event, code = self._exits[message["id"]]
                code.append(int(message["exit"]))
                event.set()

    def _send(self, message: dict[str, Any]) -> None:
        assert self._proc.stdin is not None
        with self._lock:
            self._proc.stdin.write((json.dumps(message) + "\n").encode())

    def start(
        self, event: dict[str, Any], env: dict[str, str], cwd: Path, out: Path, err: Path
    ) -> int:
        """Fork one child; returns a handle for `wait` and `kill`."""
        if not self._ready.wait(120):
            raise RuntimeError(
                f"the local fork server did not start (exit code {self._proc.poll()})"
            )
        with self._lock:
            self._next += 1
            handle = self._next
            self._exits[handle] = (threading.Event(), [])
        self._send(
            {
                "id": handle,
                "event": event,
                "env": env,
                "cwd": str(cwd),
                "out": str(out),
                "err": str(err),
            }
        )
        return handle

    def wait(self, handle: int, timeout: float | None = None) -> int | None:
        """The child's exit code (negative: killed by that signal), or None if still running."""
        event, code = self._exits[handle]
        if not event.wait(timeout):
            return None
        with self._lock:
            self._exits.pop(handle, None)
        return code[0]

    def kill(self, handle: int) -> None:
        """SIGKILL the forked child `handle` (a crash or a hard timeout)."""
        self._send({"kill": handle})

    def close(self) -> None:
        """Kill the children still running, then the server."""
        with self._lock:
            live = list(self._exits)
        for handle in live:  # children of executions that were stopped mid-invocation
            self.kill(handle)
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


if __name__ == "__main__":
    _serve()
