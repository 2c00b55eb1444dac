"""The agent factory a local child runs: the user's factory plus fault injection and a tool ledger.

It is named in the child's ELSAI_AGENT_FACTORY, so the real handler calls it exactly as it
would call the user's factory. Tools are wrapped through a BeforeToolCallEvent hook (no
change to the user's agent): each run is appended to a ledger file, and the configured
fault may SIGKILL the process right after a tool's side effect, before its result is saved.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, cast

from elsai.hooks.events import BeforeToolCallEvent
from elsai.local.faults import FAULT_ENV, Fault
from elsai.local.shapes import EVENT_MARK
from elsai.serverless import load_factory
from elsai.tools.base import AgentTool, WrappedTool
from elsai.tools.context import ToolContext
from elsai.types import ToolResult, ToolUse

if TYPE_CHECKING:
    from elsai.agent.agent import Agent
    from elsai.agent.config import AgentConfig

USER_FACTORY_ENV = "ELSAI_LOCAL_USER_FACTORY"
LEDGER_ENV = "ELSAI_LOCAL_LEDGER"
INVOCATION_ENV = "ELSAI_LOCAL_INVOCATION"


class InjectedFailure(Exception):
    """Raised when the fault plan says this slice fails (its class name is the error name)."""


def emit(kind: str, **data: Any) -> None:
    """A progress line for the parent, which reads the child's stdout live."""
    sys.stdout.write(EVENT_MARK + json.dumps({"type": kind, **data}, default=str) + "\n")
    sys.stdout.flush()


class _Tap:
    """Counts this invocation's tool calls, records them, and kills on the planned one."""

    def __init__(self, fault: Fault) -> None:
        self.fault = fault
        self.counter = itertools.count(1)
        self.ledger = os.environ.get(LEDGER_ENV)
        self.invocation = json.loads(os.environ.get(INVOCATION_ENV, "{}"))

    def record(self, tool_use: ToolUse, n: int, outcome: str) -> None:
        if not self.ledger:
            return
        line = {"tool": tool_use["name"], "tool_use_id": tool_use["toolUseId"], "input": tool_use.get("input"),
                "n": n, "outcome": outcome, "pid": os.getpid(), **self.invocation}  # fmt: skip
        fd = os.open(self.ledger, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:  # one write() on an O_APPEND fd: survives the SIGKILL that may follow
            os.write(fd, (json.dumps(line, default=str) + "\n").encode())
        finally:
            os.close(fd)

    def after_tool(self, tool_use: ToolUse, n: int) -> None:
        self.record(tool_use, n, "ok")
        if self.fault.kill_in_tool == n:
            emit("killing", name=tool_use["name"], n=n)
            os.kill(os.getpid(), signal.SIGKILL)


class _TappedTool(WrappedTool):
    def __init__(self, inner: AgentTool, tap: _Tap) -> None:
        super().__init__(inner)
        self.tap = tap

    async def invoke(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        n = next(self.tap.counter)
        emit("tool", name=tool_use["name"], input=tool_use.get("input"), n=n)
        if self.tap.fault.tool_seconds:
            await asyncio.sleep(self.tap.fault.tool_seconds)
        try:
            result = await self.inner.invoke(tool_use, context)
        except BaseException:
            self.tap.record(tool_use, n, "raised")  # e.g. an interrupt pausing the tool
            raise
        self.tap.after_tool(tool_use, n)
        return result


def _barrier(fault: Fault) -> None:
    """Wait until `parties` children loaded the session (bounded: a party may have died)."""
    assert fault.barrier is not None
    os.makedirs(fault.barrier, exist_ok=True)
    open(os.path.join(fault.barrier, f"arrived-{os.getpid()}"), "w").close()  # noqa: SIM115
    deadline = time.monotonic() + fault.barrier_seconds
    while len(os.listdir(fault.barrier)) < fault.parties and time.monotonic() < deadline:
        time.sleep(0.01)


def _kill_later(seconds: float) -> None:
    """SIGKILL this process after `seconds`, wherever it is then (a daemon timer)."""

    def kill() -> None:
        emit("killing_at_random", after_seconds=seconds)
        os.kill(os.getpid(), signal.SIGKILL)

    timer = threading.Timer(seconds, kill)
    timer.daemon = True
    timer.start()


def _agents(built: Any) -> list[Agent]:
    """The agent itself, or every node agent of a Graph (`.executor`) or Swarm."""
    nodes = getattr(built, "nodes", None)
    if not isinstance(nodes, dict):
        return [built]
    return [cast("Agent", getattr(node, "executor", node)) for node in nodes.values()]


def instrumented_factory(config: AgentConfig) -> Agent:
    """The user's factory wrapped with this invocation's fault (the child's ELSAI_AGENT_FACTORY)."""
    fault = Fault.from_env(os.environ.get(FAULT_ENV))
    if fault.raise_message:
        raise InjectedFailure(fault.raise_message)
    agent = load_factory(os.environ[USER_FACTORY_ENV])(config)
    tap = _Tap(fault)

    def wrap(event: BeforeToolCallEvent) -> None:
        if event.selected_tool is not None and not isinstance(event.selected_tool, _TappedTool):
            event.selected_tool = _TappedTool(event.selected_tool, tap)

    for each in _agents(agent):
        each.hooks.add_callback(BeforeToolCallEvent, wrap)
    if fault.kill_after_seconds is not None:
        _kill_later(fault.kill_after_seconds)
    if fault.barrier:
        _barrier(fault)
    return agent
