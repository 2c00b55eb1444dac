"""Crash-matrix child process: a tool-heavy scripted agent that can be killed on purpose.

Run as `python child_agent.py '<json args>'` (see `crash_harness.child_args`). It is a real
process with its own interpreter: killing it loses everything that was not yet durable, exactly
like a crashed worker or a timed-out Lambda.

What it does ("steps", each one agent invocation with a stable invocation id):

  step 1  agent(PROMPT, invocation_id="inv-1", should_stop=<pause at the first after_tools>)
  step 2  agent(CONTINUE, invocation_id="inv-2")

The scripted model decides each answer from the conversation it is shown (how many assistant
toolUse messages it already holds), so the same script serves the first run and any recovery:

  cycle 0: toolUse t0 (lookup)
  cycle 1: toolUse t1a + t1b in one message (lookup, run concurrently)
  cycle 2: toolUse t2 (write_note)
  then:    final text FINAL_TEXT

Observability for the parent (all files are appended with O_APPEND + fsync, so a line written
before a kill survives it):

- `ledger`:   `start <toolUseId> <idempotency_key> <pid>` when a tool starts and
              `done <toolUseId> <idempotency_key> <pid>` when it returns;
- `writes`:   one JSON line per completed storage write (number, op, key, bookmark fields),
              and a `crash` line right before an injected crash;
- `progress`: JSON lines `begin`/`end` per step (with the AgentResult flags) and every warning
              the SDK logs.

Crash injection (`crash` arg):
  {"kind": "write", "k": K, "when": "before"|"after"}  os._exit(137) around storage write K
  {"kind": "tool", "tool_use_id": ID}                    SIGKILL inside that tool, after `start`

Modes: "run" (steps 1..2, crash injection armed) and "recover" (steps start_step..2, no
injection), plus "hold" for the single-writer tests: load the agent, report `loaded`, wait for a
go file, then run the given steps. A SessionConflictError is printed and exits with code 3.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager, S3SessionManager, SessionConflictError
from elsai.session.storage.base import StorageBackend, StoredObject
from elsai.tools.context import ToolContext

PROMPT = "Please run the whole inventory job."
CONTINUE = "continue"
FINAL_TEXT = "All done: inventory job finished."
CONFLICT_EXIT = 3
CRASH_EXIT = 137

# The tool cycles the scripted model asks for, in order: (toolUseId, tool name, input).
CYCLES: list[list[tuple[str, str, dict[str, Any]]]] = [
    [("t0", "lookup", {"key": "alpha"})],
    [("t1a", "lookup", {"key": "beta"}), ("t1b", "lookup", {"key": "gamma"})],
    [("t2", "write_note", {"note": "inventory ok"})],
]
ALL_TOOL_IDS = [use_id for cycle in CYCLES for use_id, _, _ in cycle]
STEPS: dict[int, dict[str, Any]] = {
    1: {"prompt": PROMPT, "invocation_id": "inv-1", "pause": "after_first_tools"},
    2: {"prompt": CONTINUE, "invocation_id": "inv-2", "pause": None},
}


def append_line(path: str, line: str) -> None:
    """Append one line durably (survives os._exit / SIGKILL right after)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


# -- the scripted model -------------------------------------------------------------------


def next_response(request: Any) -> dict[str, Any] | str:
    """Answer as a function of the conversation: the next tool cycle, or the final text."""
    done_cycles = sum(
        1
        for m in request.messages
        if m["role"] == "assistant" and any("toolUse" in b for b in m["content"])
    )
    if done_cycles < len(CYCLES):
        return {
            "role": "assistant",
            "content": [
                {"toolUse": {"toolUseId": use_id, "name": name, "input": inp}}
                for use_id, name, inp in CYCLES[done_cycles]
            ],
        }
    return FINAL_TEXT


# -- crash injection ----------------------------------------------------------------------


class CrashInjector(StorageBackend):
    """Delegates to the real backend; logs every write and dies around write number `k`."""

    def __init__(self, inner: StorageBackend, log_path: str, crash: dict[str, Any] | None) -> None:
        self.inner = inner
        self.log_path = log_path
        self.crash = crash if crash and crash.get("kind") == "write" else None
        self.count = 0
        self._count_lock = threading.Lock()

    def read(self, key: str) -> StoredObject | None:
        return self.inner.read(key)

    def read_many(self, keys: Sequence[str]) -> list[StoredObject | None]:
        return self.inner.read_many(keys)

    def list(self, prefix: str) -> list[str]:
        return self.inner.list(prefix)

    def describe(self, key: str) -> str:
        return self.inner.describe(key)

    def create(self, key: str, data: bytes) -> str:
        return self._write("create", key, data, lambda: self.inner.create(key, data))

    def replace(self, key: str, data: bytes, *, expected_version: str | None) -> str:
        return self._write(
            "replace",
            key,
            data,
            lambda: self.inner.replace(key, data, expected_version=expected_version),
        )

    def _write(self, op: str, key: str, data: bytes, perform: Any) -> str:
        if key.endswith("/lease.json"):
            # The ownership lease (tests/system/crash/test_lease.py) guards liveness, not data:
            # the matrix numbers and crashes around the session's data writes only.
            return str(perform())
        with self._count_lock:  # the reply and a background bookmark may write at once
            self.count += 1
            n = self.count
        entry: dict[str, Any] = {"n": n, "op": op, "key": key}
        if key.endswith("checkpoint.json"):
            bookmark = json.loads(data)
            entry["bookmark"] = {
                k: bookmark[k]
                for k in ("position", "execution_status", "message_count", "cycle_index")
            }
        crash = self.crash
        if crash is not None and crash["k"] == n and crash["when"] == "before":
            append_line(self.log_path, json.dumps({"crash": "before", **entry}))
            os._exit(CRASH_EXIT)
        version = perform()
        append_line(self.log_path, json.dumps(entry))
        if crash is not None and crash["k"] == n and crash["when"] == "after":
            append_line(self.log_path, json.dumps({"crash": "after", **entry}))
            os._exit(CRASH_EXIT)
        return version


# -- tools ----------------------------------------------------------------------------------


def make_tools(ledger: str, kill_in: str | None) -> list[Any]:
    def run(context: ToolContext, value: str) -> str:
        use_id = context.tool_use_id
        append_line(ledger, f"start {use_id} {context.idempotency_key} {os.getpid()}")
        if use_id == kill_in:
            os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(5)  # never reached: SIGKILL is not deliverable late
        time.sleep(0.005)  # a sibling tool of the same batch really overlaps with this one
        append_line(ledger, f"done {use_id} {context.idempotency_key} {os.getpid()}")
        return value

    @tool
    def lookup(key: str, tool_context: ToolContext) -> str:
        """Look a key up in the inventory."""
        return run(tool_context, f"value of {key}")

    @tool
    def write_note(note: str, tool_context: ToolContext) -> str:
        """Write a note (a side effect)."""
        return run(tool_context, f"noted: {note}")

    return [lookup, write_note]


# -- agent ------------------------------------------------------------------------------------


def build_manager(args: dict[str, Any]) -> Any:
    if args["backend"] == "file":
        return FileSessionManager(session_id=args["session_id"], storage_dir=args["storage_dir"])
    return S3SessionManager(
        session_id=args["session_id"], bucket=args["bucket"], prefix=args.get("prefix", "")
    )


def build_agent(args: dict[str, Any], crash: dict[str, Any] | None) -> Agent:
    manager = build_manager(args)
    if args.get("lease") is False:
        manager.lease_seconds = None  # to reach the conditional writes behind the lease
    manager.storage = CrashInjector(manager.storage, args["writes"], crash)
    kill_in = crash["tool_use_id"] if crash and crash.get("kind") == "tool" else None
    return Agent(
        model=ScriptedModel([next_response] * 32, chunk_size=64),
        tools=make_tools(args["ledger"], kill_in),
        config=AgentConfig(
            agent_id=args["agent_id"],
            session_manager=manager,
            checkpoint=CheckpointConfig(position=args["position"]),
        ),
    )


class ProgressLog(logging.Handler):
    """Forwards SDK warnings to the progress file so the parent can assert on them."""

    def __init__(self, path: str) -> None:
        super().__init__(level=logging.WARNING)
        self.path = path

    def emit(self, record: logging.LogRecord) -> None:
        append_line(
            self.path,
            json.dumps({"event": "warning", "logger": record.name, "msg": record.getMessage()}),
        )


def run_step(agent: Agent, step: int | dict[str, Any], progress: str) -> None:
    """Run one invocation: a numbered step of STEPS, or a custom {prompt, invocation_id}."""
    spec = STEPS[step] if isinstance(step, int) else {"pause": None, "invocation_id": None, **step}
    append_line(progress, json.dumps({"event": "begin", "step": step, "pid": os.getpid()}))

    def pause_after_first_tools() -> bool:
        # Pause only at an after_tools boundary (last message is the user toolResult message),
        # once the first tool cycle's results are stored.
        last = agent.messages[-1] if agent.messages else None
        return last is not None and last["role"] == "user" and len(agent.messages) >= 3

    def pause_at_first_after_model() -> bool:
        # Pause at the first after_model boundary: the toolUse is stored, its tools not run.
        last = agent.messages[-1] if agent.messages else None
        return last is not None and last["role"] == "assistant"

    pauses = {
        "after_first_tools": pause_after_first_tools,
        "first_after_model": pause_at_first_after_model,
    }
    result = agent(
        spec["prompt"],
        invocation_id=spec["invocation_id"],
        should_stop=pauses[spec["pause"]] if spec["pause"] else None,
    )
    append_line(
        progress,
        json.dumps(
            {
                "event": "end",
                "step": step,
                "stop_reason": result.stop_reason,
                "resumed_from_checkpoint": result.resumed_from_checkpoint,
                "resume_position": result.resume_position,
                "text": str(result),
            }
        ),
    )


def main(argv: list[str]) -> int:
    args = json.loads(argv[1])
    logging.getLogger("elsai").addHandler(ProgressLog(args["progress"]))
    mode = args.get("mode", "run")
    crash = args.get("crash") if mode == "run" else None
    try:
        agent = build_agent(args, crash)
        if mode == "hold":
            append_line(args["progress"], json.dumps({"event": "loaded", "pid": os.getpid()}))
            deadline = time.monotonic() + 60
            while not os.path.exists(args["go"]):
                if time.monotonic() > deadline:
                    print("timed out waiting for the go file", file=sys.stderr)
                    return 2
                time.sleep(0.002)
        for step in args.get("steps") or range(args.get("start_step", 1), len(STEPS) + 1):
            run_step(agent, step, args["progress"])
    except SessionConflictError as exc:
        print(f"SessionConflictError: {exc}", file=sys.stderr)
        append_line(args["progress"], json.dumps({"event": "conflict", "error": str(exc)}))
        return CONFLICT_EXIT
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
