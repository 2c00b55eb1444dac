"""The synthesized asset, run as Lambda runs it: CPython 3.12, only the asset + a runtime boto3.

A slice of the example agent runs against the moto server and leaves its checkpoint, both with
the bundled SDK (which must shadow the runtime's) and with the SDK stripped and the oldest boto3
the package promises in the runtime. Below that floor the cold-start check stops the init phase
with an error that names the botocore found and the fix.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path

import boto3
import pytest

from elsai.cdk.lock import locked_versions
from elsai.serverless.contract import LAMBDA_LOCK
from elsai.session.layout import keys
from tests.unit.cdk.bundle.lambda_run import BELOW_FLOOR, FLOOR, run_agent_handler

pytestmark = pytest.mark.slow


def _slice_event(session_id: str) -> dict[str, object]:
    return {
        "action": "run_slice",
        "job_id": f"job-{session_id}",
        "execution_id": f"arn:aws:states:us-east-1:123456789012:execution:jobs:{session_id}",
        "session_id": session_id,
        "agent_id": "agent",
        "prompt": "Process orders 4 and 5",
        "interrupt_responses": None,
        "slice": 0,
    }


def _env(s3_endpoint: str, bucket: str, tmp_path: Path) -> dict[str, str]:
    return {
        "AWS_ENDPOINT_URL_S3": s3_endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_CONFIG_FILE": str(tmp_path / "no-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "NO_PROXY": "127.0.0.1,localhost",
        "ELSAI_SESSIONS_BUCKET": bucket,
        "ELSAI_MODEL": "scripted",
        "ELSAI_AGENT_FACTORY": "example_agent:build_agent",
    }


@pytest.mark.parametrize("sdk", ["bundled", "runtime floor"])
def test_a_slice_runs_from_the_asset_on_python312_and_checkpoints(
    sdk: str,
    python312: str,
    asset_dir: Path,
    asset_without_sdk: Path,
    runtime_site: Callable[[str], Path],
    s3_endpoint: str,
    s3_bucket: str,
    tmp_path: Path,
) -> None:
    bundle = asset_dir if sdk == "bundled" else asset_without_sdk
    runtime = runtime_site(FLOOR)
    session_id = f"bundle-{uuid.uuid4().hex[:12]}"
    run = run_agent_handler(
        python312,
        [bundle, runtime],
        _slice_event(session_id),
        _env(s3_endpoint, s3_bucket, tmp_path),
        tmp_path / "cwd",
    )
    assert run.returncode == 0 and run.payload is not None, run.stderr[-3000:]
    assert run.payload["result"]["status"] == "completed"
    result = run.payload["result"]
    assert (result["text"], result["cycles"]) == ("All 2 orders processed: 4, 5.", 3)
    # Only the asset and the runtime dir were importable: nothing from the dev venv.
    assert not [p for p in run.payload["sys_path"] if ".venv" in p or "site-packages" in p]
    botocore_dir = Path(run.payload["botocore_file"]).parent.parent
    if sdk == "bundled":  # the bundle's pinned botocore shadows the runtime's
        assert (botocore_dir, run.payload["botocore"]) == (
            bundle,
            locked_versions()["botocore"],
        )
    else:
        assert (botocore_dir, run.payload["botocore"]) == (runtime, FLOOR)

    s3 = boto3.client("s3")
    body = s3.get_object(Bucket=s3_bucket, Key=keys.checkpoint_key(session_id, "agent"))["Body"]
    checkpoint = json.loads(body.read())
    assert checkpoint["execution_status"] == "completed"
    assert checkpoint["message_count"] >= 6  # prompt, 2 x (tool use + result), summary


def test_botocore_below_the_floor_fails_the_cold_start_clearly(
    python312: str,
    asset_without_sdk: Path,
    runtime_site: Callable[[str], Path],
    s3_endpoint: str,
    s3_bucket: str,
    tmp_path: Path,
) -> None:
    runtime = runtime_site(BELOW_FLOOR)
    session_id = f"old-{uuid.uuid4().hex[:12]}"
    run = run_agent_handler(
        python312,
        [asset_without_sdk, runtime],
        _slice_event(session_id),
        _env(s3_endpoint, s3_bucket, tmp_path),
        tmp_path / "cwd",
    )
    assert run.returncode != 0 and run.payload is None
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("elsai.serverless.runtime_check.BotocoreTooOldError: "), run.stderr
    assert f"botocore {BELOW_FLOOR} (loaded from {runtime / 'botocore'})" in last
    assert "PutObject parameter IfMatch" in last and f"botocore>={FLOOR}" in last
    assert LAMBDA_LOCK in last and "python -m elsai.cdk.lock path" in last
    # The init phase failed before any work: nothing was written for the session.
    listed = boto3.client("s3").list_objects_v2(
        Bucket=s3_bucket, Prefix=keys.session_dir(session_id)
    )
    assert listed["KeyCount"] == 0
