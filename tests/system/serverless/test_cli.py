"""`elsai local run` end to end, as a user runs it (`make demo`): a subprocess in the repo."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "MOTO_", "ELSAI_"))}
    env.update({"JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20", "NO_COLOR": "1", **extra})
    return env


def _elsai(
    *args: str, cwd: Path, env: dict[str, str], timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "elsai.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow
def test_local_run_shows_kill_retry_resume_and_completion() -> None:
    proc = _elsai("local", "run", "Process orders 1, 2 and 3", cwd=ROOT, env=_env())
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "SIGKILLed inside tool call 2" in out and "Runtime.ExitError" in out  # the kill
    assert "Step Functions retries RunSlice after Runtime.ExitError (attempt 2)" in out  # the retry
    assert "resumed from after_model" in out  # the checkpoint resume
    assert "execution SUCCEEDED: All 3 orders processed: 1, 2, 3." in out  # completion
    assert "final text:   All 3 orders processed: 1, 2, 3." in out
    assert "2 x process_order(order_id='2')" in out and "1 x process_order(order_id='3')" in out
    assert "agents/agent_agent/checkpoint.json" in out
    assert "\033[" not in out  # no colour when not on a terminal


def test_local_run_outside_a_cdk_app_says_so(tmp_path: Path) -> None:
    proc = _elsai("local", "run", cwd=tmp_path, env=_env(), timeout=60)
    assert proc.returncode == 2
    assert f"no cdk.json in {tmp_path}" in proc.stderr and "CDK app" in proc.stderr


def test_local_run_bedrock_without_credentials_is_a_clear_error(tmp_path: Path) -> None:
    env = _env(AWS_EC2_METADATA_DISABLED="true", AWS_CONFIG_FILE=str(tmp_path / "none"),
               AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"))  # fmt: skip
    proc = _elsai("local", "run", "--model", "bedrock", cwd=ROOT, env=env, timeout=60)
    assert proc.returncode != 0
    assert "--model bedrock needs AWS credentials" in proc.stderr


def test_local_run_as_a_named_caller_stores_under_its_owner_prefix() -> None:
    """The default service is isolated: the job id and the storage carry the caller's tag."""
    import json

    from elsai.local.shapes import caller_arn
    from elsai.serverless.contract import service_keys

    proc = _elsai("local", "run", "Process order 1", "--caller", "alice", "--no-kill", "--json",
                  cwd=ROOT, env=_env())  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(proc.stdout)
    tag = service_keys.owner_tag(f"iam:{caller_arn('alice')}")
    assert summary["storage_prefix"] == service_keys.owner_prefix(tag)
    assert summary["job_id"].startswith(f"o{tag}-")
    assert any(f["key"].endswith("checkpoint.json") for f in summary["session_files"])
    bad = _elsai("local", "run", "--caller", "no/slash", cwd=ROOT, env=_env(), timeout=60)
    assert bad.returncode == 2 and "--caller" in bad.stderr and "not a valid name" in bad.stderr
