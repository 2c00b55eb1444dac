"""Fixtures of the serverless tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.unit.serverless.model_service import ModelService


@pytest.fixture
def model_service(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelService]:
    """A running `ModelService` on a free loopback port, stopped after the test."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    served = ModelService()
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        served.server.shutdown()
        served.server.server_close()
