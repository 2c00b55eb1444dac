"""Shared helpers for the `elsai sessions` tests: real agent runs and the command in a subprocess.

Not a conftest: other test folders import their conftest by name, and a second module called
`conftest` on sys.path could shadow theirs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager
from elsai.session.manager import SessionManager
from elsai.tools import ToolContext

ANSI = "\x1b["


class Crash(BaseException):
    """Process death inside a tool: a BaseException, so nothing in the loop swallows it."""


def call(*uses: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    """An assistant message asking for tools: call(("t1", "get_weather", {"city": "Paris"}))."""
    return {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": i, "name": n, "input": x}} for i, n, x in uses],
    }


@tool
def get_weather(city: str) -> str:
    """Return weather for a city; Atlantis kills the process, Nowhere is a tool error."""
    if city == "Atlantis":
        raise Crash(f"process died while running get_weather({city})")
    if city == "Nowhere":
        raise ValueError(f"no such city: {city}")
    return f"Sunny, 72F in {city}"


def recovered_tools() -> list[Any]:
    """The same tool names as after a restart, when Atlantis no longer kills the process."""

    @tool
    def get_weather(city: str) -> str:
        """Return weather for a city."""
        return f"Sunny, 72F in {city}"

    return [get_weather, approve]


@tool
def approve(amount: int, ctx: ToolContext) -> str:
    """Ask a human to approve a payment."""
    return str(ctx.interrupt("approve_transfer", {"amount": amount}))


def agent(
    store: Path | None,
    session_id: str,
    script: list[Any],
    *,
    agent_id: str = "worker",
    position: str | None = "both",
    manager: SessionManager | None = None,
    tools: list[Any] | None = None,
) -> Agent:
    return Agent(
        model=ScriptedModel(script),
        tools=tools or [get_weather, approve],
        config=AgentConfig(
            agent_id=agent_id,
            session_manager=manager
            or FileSessionManager(session_id=session_id, storage_dir=str(store)),
            checkpoint=CheckpointConfig(position=position) if position else None,  # type: ignore[arg-type]
        ),
    )


def run_clean(store: Path | None, session_id: str = "clean", **kwargs: Any) -> None:
    """Two tool cycles (one tool error), then a final answer: a completed bookmark."""
    script = [
        call(("t1", "get_weather", {"city": "Paris"})),
        call(("t2", "get_weather", {"city": "Nowhere"})),
        "Sunny in Paris; Nowhere does not exist.",
    ]
    agent(store, session_id, script, **kwargs)("What's the weather in Paris and Nowhere?")


def run_crashed(store: Path | None, session_id: str = "crashed", **kwargs: Any) -> None:
    """The tool dies mid-cycle: messages [user, assistant toolUse] and, with checkpoints,
    an active after_model bookmark."""
    try:
        agent(store, session_id, [call(("t1", "get_weather", {"city": "Atlantis"}))], **kwargs)(
            "Weather in Atlantis?"
        )
    except Crash:
        return
    raise AssertionError("the tool should have crashed the run")


def run_interrupted(store: Path, session_id: str = "hitl") -> None:
    result = agent(store, session_id, [call(("a1", "approve", {"amount": 500}))])("Pay the invoice")
    assert result.stop_reason == "interrupt"


def agent_dir(store: Path, session_id: str, agent_id: str = "worker") -> Path:
    return store / f"session_{session_id}" / "agents" / f"agent_{agent_id}"


def edit_json(path: Path, change: Any) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    return {**env, **(extra or {})}


def elsai(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run `python -m elsai.cli ARGS` the way a user runs `elsai ARGS`, output piped."""
    return subprocess.run(
        [sys.executable, "-m", "elsai.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env or cli_env(),
        timeout=timeout,
    )


def sessions(store: Path, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """`elsai sessions SUBCOMMAND --storage-dir STORE ...` (the options go after the subcommand)."""
    command, *rest = args
    return elsai("sessions", command, "--storage-dir", str(store), *rest, **kwargs)


def start_tail(*args: str) -> subprocess.Popen[str]:
    """Start `elsai sessions tail ARGS` (polling fast) and return once it has shown the stored
    state, which ends with the bookmark line: only then may the test write to the session."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "elsai.cli", "sessions", "tail", *args, "--interval", "0.05"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    assert proc.stdout is not None
    seen, line = "", ""
    while "bookmark" not in line:  # plain " bookmark " or JSON "event": "bookmark"
        line = proc.stdout.readline()
        assert line, f"tail ended early: {seen!r}"
        seen += line
    proc.seen = seen  # type: ignore[attr-defined]
    return proc


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    """Exit code and all output, including what start_tail read (communicate() would also
    bypass the reader's buffer)."""
    assert proc.stdout is not None and proc.stderr is not None
    out = getattr(proc, "seen", "") + proc.stdout.read()
    err = proc.stderr.read()
    return proc.wait(timeout=60), out, err
