"""The SDK from an installed wheel: imports, a scripted agent on a file session, a real kill, a resume.

Run by scripts/wheel_check.sh with a fresh venv's interpreter, from a directory outside the
checkout: ``python wheel_smoke.py WORKDIR``. The agent's process is SIGKILLed inside its tool
(a child process, so the kill is real), then a new process rebuilds the agent with the same ids
and it resumes from the stored checkpoint. The `mcp` and `otel` extras must import, and the
Lambda bundle's lock must be where `elsai.cdk.lock.LOCK_FILE` says.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

AGENT = '''
import os, signal, sys
from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import PositionalScriptedModel
from elsai.session import FileSessionManager

SCRIPT = [
    {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "ship", "input": {"order": "o-42"}}}]},
    "Order o-42 is on its way.",
]
marker = sys.argv[2]

@tool
def ship(order: str) -> str:
    """Ship an order (the first run dies inside it, as a killed Lambda would)."""
    if not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getpid(), signal.SIGKILL)
    return f"shipped {order}"

session = FileSessionManager(session_id="order-42", storage_dir=sys.argv[1])
session.overlap_after_model = False  # the after_model bookmark lands before the tool runs
agent = Agent(model=PositionalScriptedModel(SCRIPT), tools=[ship], config=AgentConfig(
    agent_id="fulfillment", checkpoint=CheckpointConfig(position="both"), session_manager=session))
result = agent(sys.argv[3])
print(result.resumed_from_checkpoint, result.resume_position, result)
'''


def main(workdir: Path) -> int:
    """Kill, resume, check; then the extras. Exit 0 when all of it holds."""
    import elsai

    script = workdir / "agent.py"
    script.write_text(AGENT)
    argv = [sys.executable, str(script), str(workdir / "sessions"), str(workdir / "killed")]
    first = subprocess.run([*argv, "Ship order o-42."], capture_output=True, text=True, timeout=120)
    assert first.returncode == -signal.SIGKILL, (first.returncode, first.stderr)
    second = subprocess.run([*argv, "continue"], capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "True after_model Order o-42 is on its way.", second.stdout
    stored = sorted(
        (workdir / "sessions").glob("session_order-42/agents/agent_fulfillment/messages/*.json")
    )
    assert len(stored) == 4, stored  # prompt, toolUse, toolResult, the final reply
    import elsai.telemetry.otel  # noqa: F401
    import elsai.tools.mcp  # noqa: F401

    where = Path(elsai.__file__).resolve()
    assert "site-packages" in where.parts, where  # the wheel, not a checkout
    from elsai.cdk.lock import LOCK_FILE  # what bundling installs and errors point users to

    assert LOCK_FILE.is_file() and "site-packages" in LOCK_FILE.parts, LOCK_FILE
    print(f"elsai {elsai.__version__} on Python {sys.version.split()[0]} from {where.parent}")
    print(f"killed in the tool (exit {first.returncode}), then: {second.stdout.strip()}")
    print("elsai.tools.mcp and elsai.telemetry.otel import")
    print(f"the Lambda lock ships: {LOCK_FILE}")
    return 0


if __name__ == "__main__":
    os.environ.pop("PYTHONPATH", None)
    raise SystemExit(main(Path(sys.argv[1])))
