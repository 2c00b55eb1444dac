"""Fixtures for the crash tests: a moto S3 server on loopback and stores children write to.

Children are real processes; they reach the moto server over HTTP through
`AWS_ENDPOINT_URL_S3`, exactly as a user's boto3 configuration would point at any S3.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.system.crash import crash_harness as h


@pytest.fixture
def make_store(tmp_path: Path, request: pytest.FixtureRequest) -> Callable[[str], h.Store]:
    """`make_store("file"|"s3")`: a fresh store (a directory, or a new bucket on moto)."""

    def make(backend: str) -> h.Store:
        if backend == "file":
            root = tmp_path / f"store-{uuid.uuid4().hex[:6]}"
            root.mkdir()
            return h.FileStore(root)
        endpoint = request.getfixturevalue("moto_server_url")
        return h.S3Store(endpoint, f"elsai-crash-{uuid.uuid4().hex[:16]}")

    return make


@pytest.fixture
def make_env(tmp_path: Path, request: pytest.FixtureRequest) -> Callable[[str], dict[str, str]]:
    """`make_env(backend)`: the environment of a child (dummy credentials, moto endpoint)."""

    def make(backend: str) -> dict[str, str]:
        endpoint = request.getfixturevalue("moto_server_url") if backend == "s3" else None
        return h.child_env(endpoint, tmp_path)

    return make


class Children:
    """Child processes a test started; every one still running at teardown is killed and reaped.

    A failing assertion (or a timeout) between `start` and the child's end would otherwise leave
    it running after the suite, holding its store and lease.
    """

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, argv: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
        """Start `argv` with pipes for its output, owned by this fixture."""
        proc = subprocess.Popen(
            argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.procs.append(proc)
        return proc

    def end_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()  # reaps it and closes its pipes


@pytest.fixture
def children() -> Iterator[Children]:
    """Start children through this; teardown kills and reaps them, also when the test fails."""
    started = Children()
    try:
        yield started
    finally:
        started.end_all()
