"""examples/hello-service from a copy outside this repository, its README's commands in order.

`pytest -q`, `elsai local run --kill-in-tool 1 ...` (killed, retried, resumed, SUCCEEDED) and
`elsai jobs serve` with `elsai jobs start --local ... --follow` from another process, each with
this environment's interpreter and nothing of the checkout on the path. (`cdk synth` through
the CLI is left to the construct tests: they synthesize the same app with bundling.)
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.system.serverless.example_copy import copy_example, user_env


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_example("hello-service", tmp_path_factory.mktemp("user"))


@pytest.fixture(scope="module")
def env(copy: Path) -> dict[str, str]:
    return user_env(copy)


def _run(
    copy: Path, env: dict[str, str], *argv: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *argv],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_its_own_test_passes(copy: Path, env: dict[str, str]) -> None:
    proc = _run(copy, env, "pytest", "-q", "-p", "no:cacheprovider")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


@pytest.mark.slow
def test_local_run_is_killed_in_the_tool_and_resumes(copy: Path, env: dict[str, str]) -> None:
    proc = _run(copy, env, "elsai.cli", "local", "run", "--kill-in-tool", "1", "Please greet Ada")
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert (
        "state machine arn:aws:states:" in out and ":HelloService-Agents-jobs" in out
    )  # its own stack
    assert "SIGKILLed inside tool call 1" in out and "resumed from after_model" in out
    assert "SUCCEEDED" in out and "final text:   Done: Hello, Ada!" in out
    assert (copy / "build" / "elsai-local").is_dir()  # the synthesized app, cached in the copy


@pytest.fixture
def served(copy: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    server = subprocess.Popen([sys.executable, "-m", "elsai.cli", "jobs", "serve", "--fast-retries"], cwd=copy, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    try:
        assert server.stdout is not None
        line = server.stdout.readline()  # blocks until the API listens (or the server exits)
        assert "serving the local jobs API on http://127.0.0.1:" in line, (
            line + server.stdout.read()
        )
        yield server
    finally:
        server.terminate()
        server.wait(timeout=60)


@pytest.mark.slow
def test_jobs_serve_and_start_follow(
    copy: Path, env: dict[str, str], served: subprocess.Popen[str]
) -> None:
    proc = _run(
        copy, env, "elsai.cli", "jobs", "start", "--local", "Please greet Grace", "--follow"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Hello, Grace!" in proc.stdout
    assert served.poll() is None
