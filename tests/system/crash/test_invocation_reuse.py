"""A reused invocation id with another prompt is refused after a mid-tool death too.

The stored input of an invocation wins its retry: a different prompt under the same id would
be dropped while the old run finishes. So after a process is killed inside a tool, the same id
with a new prompt ("CANCEL: ...") raises InvocationMismatchError and nothing is written; the
same id with the same prompt resumes the run.

This file is also the child: `python test_crash_invocation_reuse.py '<json args>'` starts the
transfer and SIGKILLs itself inside the tool, after logging `start <pid>` to the ledger.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

PROMPT = "Transfer 100 to account 7."
SCRIPT: list[Any] = [
    {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": "t1", "name": "transfer", "input": {"amount": 100}}}],
    },
    "Transferred 100.",
]


def build(store: str, ledger: str, kill: bool) -> Any:
    """The agent on `store`; its tool logs each run and, with `kill`, dies inside."""
    from elsai import Agent, tool
    from elsai.agent import AgentConfig
    from elsai.checkpoint import CheckpointConfig
    from elsai.models import PositionalScriptedModel
    from elsai.session import FileSessionManager

    @tool
    def transfer(amount: int) -> str:
        """Move money: the side effect a dropped CANCEL would let happen."""
        with open(ledger, "a") as f:
            f.write(f"start {os.getpid()}\n")
        if kill:
            os.kill(os.getpid(), signal.SIGKILL)
        return f"transferred {amount}"

    return Agent(
        model=PositionalScriptedModel(SCRIPT),
        tools=[transfer],
        config=AgentConfig(
            agent_id="bank",
            session_manager=FileSessionManager(session_id="pay", storage_dir=store),
            checkpoint=CheckpointConfig(position="both"),
        ),
    )


if __name__ == "__main__":
    args = json.loads(sys.argv[1])
    build(args["store"], args["ledger"], kill=True)(PROMPT, invocation_id="inv-1")
    sys.exit(0)  # not reached: the tool kills the process


import pytest  # noqa: E402

from elsai.errors import InvocationMismatchError  # noqa: E402


def _snapshot(store: Path) -> dict[str, bytes]:
    return {str(p.relative_to(store)): p.read_bytes() for p in store.rglob("*") if p.is_file()}


def test_another_prompt_under_the_id_of_a_run_killed_mid_tool_is_refused(
    tmp_path: Path, children: Any
) -> None:
    store, ledger = tmp_path / "store", tmp_path / "ledger.txt"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    args = {"store": str(store), "ledger": str(ledger)}
    child = children.start([sys.executable, __file__, json.dumps(args)], env)
    _, err = child.communicate(timeout=120)
    assert child.returncode == -signal.SIGKILL, err[-2000:]
    assert ledger.read_text().split() == ["start", str(child.pid)]
    before = _snapshot(store)

    cancel = build(str(store), str(ledger), kill=False)
    with pytest.raises(InvocationMismatchError, match=r"invocation 'inv-1'.*different prompt"):
        cancel("CANCEL: do not transfer anything.", invocation_id="inv-1")
    assert _snapshot(store) == before  # nothing was written, not even the lease
    assert ledger.read_text().split() == ["start", str(child.pid)]  # nothing was run

    retry = build(str(store), str(ledger), kill=False)
    result = retry(PROMPT, invocation_id="inv-1")
    assert str(result) == "Transferred 100." and result.resumed_from_checkpoint
    assert ledger.read_text().split() == ["start", str(child.pid), "start", str(os.getpid())]
