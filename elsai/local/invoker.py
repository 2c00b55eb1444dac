"""Runs one Lambda invocation as a child process and maps its end to Lambda's answer.

exit 0 + result line      -> the payload
exception (stderr JSON)   -> function error, errorType = the exception's class name
killed by a signal        -> function error `Runtime.ExitError` (what Lambda reports)
past the function timeout -> we kill it: function error `Sandbox.Timedout`
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elsai.local.faults import Fault, InvocationInfo
from elsai.local.shapes import ERROR_MARK, EVENT_MARK, RESULT_MARK
from elsai.local.zygote import Zygote
from elsai.serverless.contract import RUNTIME_EXIT_ERROR, SANDBOX_TIMEDOUT

INIT_ALLOWANCE_S = 10.0  # Lambda's init phase limit: imports are not part of the timeout


class _Deadline:
    """When to kill the child: init allowance + timeout, then exactly `timeout` once the handler started."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.at = time.monotonic() + INIT_ALLOWANCE_S + timeout_s
        self.hit = False

    def handler_started(self) -> None:
        self.at = time.monotonic() + self.timeout_s

    def expired(self) -> bool:
        return time.monotonic() > self.at


@dataclass
class InvocationRecord:
    """Everything one invocation did, kept for tests and the CLI summary."""

    info: InvocationInfo
    event: dict[str, Any]
    fault: Fault | None
    request_id: str
    started: float = field(default_factory=time.time)
    duration_s: float = 0.0
    returncode: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None  # Lambda's error payload (errorType, errorMessage, ...)
    logs: list[Any] = field(default_factory=list)  # Powertools JSON lines (dicts) and other stdout
    child_events: list[dict[str, Any]] = field(default_factory=list)
    stderr: str = ""
    version: str = ""  # the agent function version it ran (its deploy's code snapshot)

    @property
    def killed(self) -> bool:
        """Whether the invocation died the way a crash or hard timeout ends a Lambda."""
        return self.error is not None and self.error.get("errorType") in (
            RUNTIME_EXIT_ERROR,
            SANDBOX_TIMEDOUT,
        )


def run_child(
    record: InvocationRecord,
    *,
    cwd: Path,
    env: dict[str, str],
    timeout_s: float,
    on_child_event: Callable[[dict[str, Any]], None],
    zygote: Zygote | None = None,
) -> None:
    """Run the child to its end, streaming its progress lines; fill `record` in place.

    With a `zygote` the child is forked from a server that already imported the heavy
    libraries (fast); otherwise it is a fresh interpreter (a true cold start, ~1 s slower).
    """
    started = time.monotonic()
    deadline = _Deadline(timeout_s)

    def on_event(data: dict[str, Any]) -> None:
        if data.get("type") == "handler_started":
            deadline.handler_started()
        on_child_event(data)

    def take(line: str) -> None:
        _take_line(record, line, on_event)

    if zygote is not None:
        _run_forked(zygote, record, cwd, env, deadline, take)
    else:
        _run_spawned(record, cwd, env, deadline, take)
    record.duration_s = time.monotonic() - started
    if record.returncode == 0 and record.result is not None:
        return
    if deadline.hit:
        message = f"Task timed out after {timeout_s:.2f} seconds"
        record.error = {
            "errorType": SANDBOX_TIMEDOUT,
            "errorMessage": f"RequestId: {record.request_id} Error: {message}",
        }
    elif (error := _error_line(record.stderr)) is not None:
        error["stackTrace"] = error.get("stackTrace", [])[-3:]  # keep the Cause short
        record.error = error
    else:
        code = record.returncode or 0
        how = f"signal: {_signal_name(-code)}" if code < 0 else f"exit status {code}"
        record.error = {
            "errorType": RUNTIME_EXIT_ERROR,
            "errorMessage": f"RequestId: {record.request_id} Error: Runtime exited with error: {how}",
        }


def _run_spawned(
    record: InvocationRecord,
    cwd: Path,
    env: dict[str, str],
    deadline: _Deadline,
    take: Callable[[str], None],
) -> None:
    with tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "elsai.local.lambda_child"], cwd=cwd, env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
        )  # fmt: skip
        assert proc.stdin is not None and proc.stdout is not None

        def watchdog() -> None:
            while proc.poll() is None:
                if deadline.expired():
                    deadline.hit = True
                    proc.kill()
                    return
                time.sleep(0.02)

        threading.Thread(target=watchdog, daemon=True).start()
        try:
            proc.stdin.write(json.dumps(record.event))
            proc.stdin.close()
            for line in proc.stdout:
                take(line.rstrip("\n"))
            record.returncode = proc.wait()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        err.seek(0)
        record.stderr = err.read()


def _run_forked(zygote: Zygote, record: InvocationRecord, cwd: Path, env: dict[str, str], deadline: _Deadline,
                take: Callable[[str], None]) -> None:  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="elsai-child-") as tmp:
        out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
        out.touch()
        handle = zygote.start(record.event, env, cwd, out, err)
        pending = ""
        with out.open() as reader:
            while True:
                code = zygote.wait(handle, timeout=0.01)
                pending += reader.read()
                *lines, pending = pending.split("\n")
                for line in lines:
                    take(line)
                if code is not None:
                    break
                if not deadline.hit and deadline.expired():
                    deadline.hit = True
                    zygote.kill(handle)
        if pending:
            take(pending)
        record.returncode = code
        record.stderr = err.read_text() if err.exists() else ""


def _take_line(
    record: InvocationRecord, line: str, on_child_event: Callable[[dict[str, Any]], None]
) -> None:
    if line.startswith(RESULT_MARK):
        record.result = json.loads(line[len(RESULT_MARK) :])
    elif line.startswith(EVENT_MARK):
        data = json.loads(line[len(EVENT_MARK) :])
        record.child_events.append(data)
        on_child_event(data)
    elif line.strip():
        try:
            record.logs.append(json.loads(line))
        except ValueError:
            record.logs.append(line)


def _error_line(stderr: str) -> dict[str, Any] | None:
    for line in reversed(stderr.splitlines()):
        if line.startswith(ERROR_MARK):
            return dict(json.loads(line[len(ERROR_MARK) :]))
    return None


def _signal_name(number: int) -> str:
    import signal

    try:
        return {signal.SIGKILL: "killed"}.get(signal.Signals(number), signal.Signals(number).name)
    except ValueError:
        return str(number)
