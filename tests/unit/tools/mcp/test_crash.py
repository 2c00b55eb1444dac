"""SIGKILL of an agent process in the middle of an MCP call, then a rebuilt agent resumes.

The rebuilt agent (same ids, same client config) reconnects to a fresh server process, finds
its MCP tools again, resumes from the `after_model` bookmark and re-runs the pending call with
the same `_meta` idempotency key, which the server logs.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import boto3
import pytest

from tests.system.crash.crash_harness import child_env
from tests.unit.tools.mcp.conftest import read_log, wait_for

CHILD = str(Path(__file__).with_name("crash_child.py"))


def bookmark(backend: str, where: str) -> dict[str, Any]:
    key = "session_mcp-job-1/agents/agent_mcp-worker/checkpoint.json"
    if backend == "file":
        return dict(json.loads((Path(where) / key).read_text()))
    body = boto3.client("s3").get_object(Bucket=where, Key=f"mcp/{key}")["Body"].read()
    return dict(json.loads(body))


def kill_orphans(log: Path) -> None:
    """End the stdio servers the children started, by their logged pids."""
    for pid in {int(e["pid"]) for e in read_log(log)}:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("backend", ["file", "s3"])
def test_sigkill_mid_mcp_call_resumes_with_the_same_idempotency_key(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    endpoint = request.getfixturevalue("s3_endpoint") if backend == "s3" else None
    if endpoint:
        where = f"elsai-mcp-{uuid.uuid4().hex[:12]}"
        boto3.client("s3").create_bucket(Bucket=where)
    else:
        where = str(tmp_path / "sessions")
    log, block = tmp_path / "server.jsonl", tmp_path / "block"
    block.touch()
    args = json.dumps({"backend": backend, "where": where, "log": str(log), "block": str(block)})
    env = child_env(endpoint, tmp_path)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[4]), env.get("PYTHONPATH", "")])
    first = subprocess.Popen([sys.executable, CHILD, args], env=env, stdout=subprocess.PIPE)
    try:
        wait_for(lambda: any(e["phase"] == "start" for e in read_log(log)), "the MCP call")
        first.send_signal(signal.SIGKILL)
        assert first.wait(30) == -signal.SIGKILL
        kill_orphans(log)  # as if the whole worker died; the old server must not finish the call
        mark = bookmark(backend, where)
        assert (mark["position"], mark["execution_status"]) == ("after_model", "active")

        block.unlink()  # the re-run call may finish now
        second = subprocess.run(
            [sys.executable, CHILD, args], env=env, capture_output=True, text=True, timeout=120
        )
        assert second.returncode == 0, second.stderr
        outcome = json.loads(second.stdout.strip().splitlines()[-1])
    finally:
        kill_orphans(log)
        if first.poll() is None:
            first.kill()
    assert outcome == {
        "resumed": True,
        "position": "after_model",
        "text": "order 42 recorded",
        "tools": ["orders_record"],
    }
    starts = [e for e in read_log(log) if e["tool"] == "record" and e["phase"] == "start"]
    assert len(starts) == 2, starts
    assert {e["tool_use_id"] for e in starts} == {"rec-1"}
    assert starts[0]["key"] == starts[1]["key"] and len(starts[0]["key"]) == 32
    assert starts[0]["pid"] != starts[1]["pid"], "the re-run went to a fresh server process"
    ends = [e for e in read_log(log) if e["tool"] == "record" and e["phase"] == "end"]
    assert [e["pid"] for e in ends] == [starts[1]["pid"]]
    assert bookmark(backend, where)["execution_status"] == "completed"
