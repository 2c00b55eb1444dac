"""Fixtures shared by every test directory: one moto S3 server and a clean AWS environment.

S3 tests talk HTTP to a moto server on loopback, found through `AWS_ENDPOINT_URL_S3` exactly as
a user's configuration would point boto3 at it; no boto3 call is faked. Each test gets its own
bucket, so one server serves the whole session.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# Property-based tests (hypothesis): a bounded budget in `make test`, a longer one with
# `make fuzz` (HYPOTHESIS_PROFILE=long). No example database: nothing is written to the checkout.
# `ci` is derandomized: the same examples on every run, so a CI failure is always reproducible.
settings.register_profile(
    "ci", max_examples=25, deadline=None, database=None, print_blob=True, derandomize=True
)
settings.register_profile("long", max_examples=1000, deadline=None, database=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def moto_server_url() -> Iterator[str]:
    """One moto server per test session, on a free loopback port."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one access-log line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Dummy credentials and no user AWS config, so nothing can reach a real account."""
    for var in (
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_SESSION_TOKEN",
        "AWS_SECURITY_TOKEN",
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_S3",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def s3_endpoint(aws_env: None, moto_server_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """Point every boto3 S3 client created in the test at the moto server."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", moto_server_url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    return moto_server_url


@pytest.fixture
def s3_bucket(s3_endpoint: str) -> str:
    """A fresh, empty bucket per test (moto rejects names shorter than 3 characters)."""
    import boto3

    name = f"elsai-test-{uuid.uuid4().hex[:20]}"
    boto3.client("s3").create_bucket(Bucket=name)
    return name
