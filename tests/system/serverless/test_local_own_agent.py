"""`elsai local run` with a user's own agent: a module outside the checkout, its own
factory and a tool that asks a person; the first run stops waiting, the second answers it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

USER_MODULE = '''
"""A user's agent: asks a person before shipping."""
from elsai import Agent, tool
from elsai.models import ScriptedModel
from elsai.tools import ToolContext
from elsai.types import tool_results
from shop_words import VERB  # from the PYTHONPATH the user already had


@tool
def ship(order_id: str, ctx: ToolContext) -> str:
    """Ship an order once a person agreed.

    Args:
        order_id: The order to ship.
    """
    decision = ctx.interrupt("confirm_shipping", {"order_id": order_id})
    return f"{VERB} {order_id}: {decision['verdict']}"


def turn(request):
    results = [r for m in request.messages if m["role"] == "user" for r in tool_results(m)]
    if results:
        return "Mine: " + results[-1]["content"][0]["text"]
    return {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": "ship-7", "name": "ship", "input": {"order_id": "7"}}}]}


def make(config):
    return Agent(model=ScriptedModel([turn] * 10, record=False), tools=[ship], config=config)
'''


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "elsai.cli", "local", "run", "Ship order 7", "--no-kill",
               "--fast-retries", "--timeout", "60", *args]  # fmt: skip
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_own_agent_waits_then_the_answer_finishes_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "my_shop_agent.py").write_text(textwrap.dedent(USER_MODULE))
    elsewhere = tmp_path / "elsewhere"  # an existing PYTHONPATH entry the children keep
    elsewhere.mkdir()
    (elsewhere / "shop_words.py").write_text('VERB = "shipping"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "MOTO_", "ELSAI_"))}
    env.update({"JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20", "NO_COLOR": "1",
                "PYTHONPATH": str(elsewhere)})  # fmt: skip
    own = ["--agent-factory", "my_shop_agent:make", "--pythonpath", str(project)]

    first = _run(*own, "--session-id", "shop-1", env=env)

    assert first.returncode == 4, first.stdout + first.stderr
    assert "WAITING_FOR_INPUT" in first.stdout
    (interrupt_id,) = re.findall(r"^    (\S+)  confirm_shipping  reason: \{\"order_id\": \"7\"\}$",
                                 first.stdout, re.M)  # fmt: skip
    assert f"--session-id shop-1 --answer {interrupt_id}=JSON" in first.stdout
    assert "does not ask" not in first.stdout

    wrong = _run(*own, "--session-id", "shop-1", "--answer", 'interrupt-nope="yes"', env=env)
    assert wrong.returncode == 4, wrong.stdout + wrong.stderr
    assert "--answer ids this wait does not ask: interrupt-nope" in wrong.stdout
    assert f"{interrupt_id}  confirm_shipping" in wrong.stdout

    second = _run(*own, "--session-id", "shop-1", "--answer",
                  f'{interrupt_id}={{"verdict": "approved"}}', env=env)  # fmt: skip

    assert second.returncode == 0, second.stdout + second.stderr
    assert "final text:   Mine: shipping 7: approved" in second.stdout
    assert "session_shop-1/" in second.stdout


def test_bad_answer_and_factory_are_usage_errors(tmp_path: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    bad_json = _run("--answer", "abc=approve", env=env)
    bad_factory = _run("--agent-factory", "no_colon", env=env)
    bad_path = _run("--pythonpath", str(tmp_path / "missing"), env=env)

    assert bad_json.returncode == 2 and "abc='\"approve\"'" in bad_json.stderr, bad_json.stderr
    assert bad_factory.returncode == 2 and "expected MODULE:FUNCTION" in bad_factory.stderr
    assert bad_path.returncode == 2 and "not a directory" in bad_path.stderr


def test_help_documents_the_exit_codes_and_the_own_agent_options() -> None:
    proc = subprocess.run([sys.executable, "-m", "elsai.cli", "local", "run", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "4  the job is WAITING_FOR_INPUT" in proc.stdout and "1  the job failed" in proc.stdout
    for option in ("--agent-factory", "--pythonpath", "--session-id", "--answer INTERRUPT_ID=JSON"):
        assert option in proc.stdout, option
