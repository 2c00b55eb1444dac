"""`elsai jobs --local` end to end, as a user runs it: `elsai jobs serve` in one process, the
client commands as separate processes talking HTTP to it on 127.0.0.1.

Covers start → follow → interrupt → answer → succeeded (exit codes 4 then 0) and a cancel
while a tool runs (follow exits 3, the job reports CANCELLED).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    tmp = tmp_path_factory.mktemp("jobs-cli")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "MOTO_", "ELSAI_"))}
    env.update({"JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20", "NO_COLOR": "1",
                "XDG_CACHE_HOME": str(tmp / "cache"), "POWERTOOLS_TRACE_DISABLED": "true"})  # fmt: skip
    server = subprocess.Popen(
        [sys.executable, "-m", "elsai.cli", "jobs", "serve", "--fast-retries",
         "--agent-factory", "serverless_agents:build_agent", "--pythonpath", str(HERE),
         "--child-env", f"AGENT_LEDGER={tmp / 'ledger.jsonl'}", "--tool-seconds", "0.5"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert "serving the local jobs API on http://127.0.0.1:" in line, line
        yield env
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert not (tmp / "cache" / "elsai" / "local-api.json").exists()  # removed on SIGTERM


def elsai(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "elsai.cli", "jobs", *args, "--local"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip


def test_start_follow_answer_follow_succeeds(served: dict[str, str]) -> None:
    started = elsai(served, "start", "Refund order 5", "--agent", "approver", "--follow")
    assert started.returncode == 4, started.stdout + started.stderr  # waiting for input
    job_id = started.stdout.split()[1]
    assert "? interrupt-" in started.stdout and "approve_refund" in started.stdout
    assert "⏸ waiting for input" in started.stdout
    # followed live: the slice's messages come before its end, never after
    out = started.stdout
    assert out.index("── slice 0 started") < out.index("user: Refund order 5")
    assert out.index("assistant: Refunding order 5.") < out.index("── slice 0 ended")
    status = json.loads(elsai(served, "status", job_id, "--json").stdout)
    assert status["status"] == "WAITING_FOR_INPUT"
    (interrupt,) = status["interrupts"]
    answered = elsai(
        served, "answer", job_id, "--interrupt", interrupt["id"], "--response", '"approve"'
    )
    assert answered.returncode == 0, answered.stderr
    assert f"answered {interrupt['id']}" in answered.stdout
    followed = elsai(served, "follow", job_id, "--json")
    assert followed.returncode == 0, followed.stdout + followed.stderr
    lines = [json.loads(x) for x in followed.stdout.splitlines()]
    kinds = [x["type"] for x in lines]
    assert kinds.index("answered") < kinds.index("job_ended") < len(kinds) - 1
    assert lines[-1]["type"] == "status" and lines[-1]["status"] == "SUCCEEDED"
    assert lines[-1]["result"]["text"] == "Done: Refund of order 5 approved and paid"
    again = elsai(served, "follow", job_id)  # text mode, the whole story from the start
    assert again.returncode == 0
    assert "■ job SUCCEEDED" in again.stdout and "result: Done: Refund of order 5" in again.stdout
    listed = elsai(served, "ls")
    assert job_id in listed.stdout and "SUCCEEDED" in listed.stdout


def test_cancel_while_a_tool_runs(served: dict[str, str]) -> None:
    started = elsai(served, "start", "Process orders 1, 2, 3, 4, 5 and 6", "--json")
    job_id = json.loads(started.stdout)["job_id"]
    follow = subprocess.Popen([sys.executable, "-m", "elsai.cli", "jobs", "follow", job_id, "--json", "--local"],
                              cwd=ROOT, env=served, stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert follow.stdout is not None
    deadline = time.monotonic() + 60
    for line in follow.stdout:  # until the agent called its first tool
        if json.loads(line).get("tool_calls"):
            break
        assert time.monotonic() < deadline
    cancelled = elsai(served, "cancel", job_id)
    assert cancelled.returncode == 0, cancelled.stderr
    assert cancelled.stdout.strip() == f"job {job_id}: CANCELLED"
    assert follow.wait(timeout=60) == 3
    status = json.loads(elsai(served, "status", job_id, "--json").stdout)
    assert status["status"] == "CANCELLED"
    refused = elsai(served, "cancel", job_id)
    assert refused.returncode == 2 and "already ended with status CANCELLED" in refused.stderr


def test_serve_publishes_the_openapi_document_and_answers_undeclared_methods_in_json(
    served: dict[str, str],
) -> None:
    import urllib.error
    import urllib.request

    from elsai.serverless.contract.openapi import render

    state = Path(served["XDG_CACHE_HOME"]) / "elsai" / "local-api.json"
    url = json.loads(state.read_text())["url"]
    with urllib.request.urlopen(f"{url}/openapi.json", timeout=30) as response:
        assert response.read().decode() == render()
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(urllib.request.Request(f"{url}/jobs", method="TRACE"), timeout=30)
    assert refused.value.code == 405 and refused.value.headers["Allow"] == "GET, POST"
    assert json.loads(refused.value.read()) == {"error": "TRACE is not allowed here"}
