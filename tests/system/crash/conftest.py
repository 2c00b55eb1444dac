"""Fixtures for the crash tests: a moto S3 server on loopback and stores children write to.

Children are real processes; they reach the moto server over HTTP through
`AWS_ENDPOINT_URL_S3`, exactly as a user's boto3 configuration would point at any S3.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
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
