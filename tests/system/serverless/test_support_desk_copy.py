"""examples/support-desk from a copy outside this repository, its README's commands.

`pytest -q`, then `elsai local run` on the copy's own CDK app: a Graph (triage -> resolver)
whose resolver calls the bundled MCP server in a real subprocess, is SIGKILLed inside that
call (`--kill-in-tool 1`, a node slice), resumes from its checkpoint, waits for the refund
approval and gets it from `--answer`: SUCCEEDED, with the refund done.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from elsai.interrupt.model import Interrupt
from elsai.local.faults import InvocationInfo, kill_in_job_tool
from elsai.serverless.contract.steps import NODE_SLICE
from tests.system.serverless.example_copy import copy_example, user_env


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_example("support-desk", tmp_path_factory.mktemp("user"))


@pytest.fixture(scope="module")
def env(copy: Path) -> dict[str, str]:
    return user_env(copy)


def _run(copy: Path, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *argv], cwd=copy, env=env,
                          capture_output=True, text=True, timeout=400)  # fmt: skip


def test_a_graph_node_slice_is_a_kill_point_for_kill_in_tool() -> None:
    plan = kill_in_job_tool(1)
    fault = plan(InvocationInfo("job", "s", "resolver", NODE_SLICE, 0, 1, tool_runs=0))
    assert fault is not None and fault.kill_in_tool == 1
    assert plan(InvocationInfo("job", "s", "resolver", NODE_SLICE, 0, 2, tool_runs=1)) is None


def test_its_own_test_passes(copy: Path, env: dict[str, str]) -> None:
    proc = _run(copy, env, "pytest", "-q", "-p", "no:cacheprovider")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


@pytest.mark.slow
def test_local_run_kills_the_mcp_call_resumes_and_is_approved(
    copy: Path, env: dict[str, str]
) -> None:
    # The ask's id: its tool call, name, position and reason (what the tool asks about).
    reason = {"order_id": "1001", "amount": 49}
    approval = Interrupt.for_tool("refund-1", "approve_refund", reason).id
    answer = f"{approval}={json.dumps({'approved': True})}"
    prompt = "My kettle from order 1001 arrived broken, refund please"
    proc = _run(copy, env, "elsai.cli", "local", "run", "--kill-in-tool", "1",
                "--answer", answer, prompt)  # fmt: skip
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert ":SupportDesk-Desk-jobs" in out  # the copy's own stack
    assert "SIGKILLed inside tool call 1 (lookup_order)" in out
    assert "[resolver slice 0 #2] resumed from after_model" in out
    assert out.index("SIGKILLed") < out.index("waiting for input") < out.index("POST /jobs/")
    assert "SUCCEEDED" in out and "final text:   Resolved: refunded 49 for order 1001" in out
