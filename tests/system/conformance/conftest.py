"""Fixtures for the conformance engine: definitions exported by the main venv."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.system.conformance.engine import Engine, fast

DEFINITIONS = Path(os.environ.get("CONFORMANCE_DIR", "build/conformance"))


def _definition(name: str) -> dict[str, Any]:
    path = DEFINITIONS / f"{name}.asl.json"
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: run `make conformance` (it exports the synthesized definitions)"
        )
    return dict(json.loads(path.read_text()))


def _engine(name: str, monkeypatch: pytest.MonkeyPatch, **fast_kw: Any) -> Iterator[Engine]:
    engine = Engine(fast(_definition(name), **fast_kw))
    engine.install(monkeypatch)
    yield engine


@pytest.fixture
def default(monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """cdk.json's machine (retries shortened)."""
    yield from _engine("default", monkeypatch)


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    """maxSlices 5, maxModelCalls 4, 2 slices per execution, 2 s interrupt wait, 1 s task timeout."""
    yield from _engine("small", monkeypatch, task_timeout=1)
