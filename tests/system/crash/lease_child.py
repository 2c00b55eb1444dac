"""Ownership-lease child: one agent invocation whose only tool blocks until the parent lets go.

Run as `python lease_child.py '<json args>'`. Args: storage_dir, session_id, agent_id,
invocation_id (or null), lease_seconds, log (the tool's side-effect log: one `<pid> <order>`
line per run, fsynced before the tool blocks) and gate (a path: the tool returns once it exists).

Exit codes: 0 finished, 3 SessionConflictError, 4 AgentInUseError (message on stderr).
"""

from __future__ import annotations

import json
import os
import sys
import time

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.errors import AgentInUseError
from elsai.models import PositionalScriptedModel
from elsai.session import FileSessionManager, SessionConflictError

CONFLICT_EXIT, IN_USE_EXIT = 3, 4
SCRIPT = [
    {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": "t1", "name": "ship", "input": {"order": "o-1"}}}],
    },
    "Shipped o-1.",
]


def main(args: dict[str, object]) -> int:
    log, gate = str(args["log"]), str(args["gate"])

    @tool
    def ship(order: str) -> str:
        """Ship an order: the side effect that must not run twice while its owner lives."""
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, f"{os.getpid()} {order}\n".encode())
        os.fsync(fd)
        os.close(fd)
        while not os.path.exists(gate):
            time.sleep(0.01)
        return f"shipped {order}"

    manager = FileSessionManager(session_id=str(args["session_id"]), storage_dir=str(args["dir"]))
    manager.lease_seconds = float(args["lease_seconds"])  # type: ignore[arg-type]
    agent = Agent(
        model=PositionalScriptedModel(SCRIPT),
        tools=[ship],
        config=AgentConfig(
            agent_id=str(args["agent_id"]),
            session_manager=manager,
            checkpoint=CheckpointConfig(position="both"),
        ),
    )
    try:
        result = agent("Ship order o-1.", invocation_id=args.get("invocation_id"))  # type: ignore[arg-type]
    except AgentInUseError as exc:
        print(f"AgentInUseError: {exc}", file=sys.stderr)
        return IN_USE_EXIT
    except SessionConflictError as exc:
        print(f"SessionConflictError: {exc}", file=sys.stderr)
        return CONFLICT_EXIT
    print(json.dumps({"text": str(result), "resumed": result.resumed_from_checkpoint}))
    return 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
