"""Run the agent handler from a built asset under CPython 3.12, the way the Lambda runtime does.

Only the asset and a "runtime" site-packages are importable (no dev venv, no user site, no
repository checkout): `python -S -c DRIVER` from an empty working directory.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.cold_start import lambda_env

REPO_ROOT = Path(__file__).resolve().parents[4]
#: The oldest boto3 the package metadata promises (pyproject.toml) and the one before it.
FLOOR = "1.35.69"
BELOW_FLOOR = "1.35.68"
RESULT_MARK = "@@LAMBDA_RESULT@@"

# The runtime's part: init (import the handler), then one invocation with a Lambda-shaped context.
DRIVER = f"""
import json, os, sys, time


class Context:
    function_name = "elsai-agent"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:elsai-agent"
    memory_limit_in_mb = 1024
    aws_request_id = "req-bundle-test"
    log_group_name = "/aws/lambda/elsai-agent"
    log_stream_name = "bundle-test"

    def __init__(self):
        self._deadline = time.monotonic() + 900

    def get_remaining_time_in_millis(self):
        return int((self._deadline - time.monotonic()) * 1000)


from elsai_lambdas import agent_handler
import botocore

result = agent_handler.handler(json.loads(os.environ["LAMBDA_EVENT"]), Context())
print({RESULT_MARK!r} + json.dumps({{
    "result": result,
    "botocore": botocore.__version__,
    "botocore_file": botocore.__file__,
    "sys_path": sys.path,
}}))
"""


@dataclass
class Run:
    """What one invocation printed: the handler result (None if it raised) and its stderr."""

    returncode: int
    payload: dict[str, Any] | None
    stderr: str


def run_agent_handler(
    python: str,
    path: list[Path],
    event: dict[str, Any],
    env: dict[str, str],
    workdir: Path,
) -> Run:
    """Invoke `agent_handler.handler(event)` in a fresh 3.12 interpreter with only `path`."""
    workdir.mkdir(parents=True, exist_ok=True)
    full_env = lambda_env(path, {**env, "LAMBDA_EVENT": json.dumps(event)})
    proc = subprocess.run(
        [python, "-S", "-c", DRIVER],
        cwd=workdir,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    payload = None
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT_MARK):
            payload = json.loads(line[len(RESULT_MARK) :])
    return Run(proc.returncode, payload, proc.stderr)
