"""Fixtures of the real-model tests: one llama.cpp server per session, models that reach it.

Run with `make e2e-real` (its own venv with llama-cpp-python and the GGUF package). Plain
`make test` never collects this folder (`--ignore` in the default addopts), so nothing here is
imported without the real-model venv. `ELSAI_REAL_MODEL_URL` points the tests at a server
that is already running (`scripts/e2e_real.py` starts one); otherwise a fixture starts it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from elsai.models.openai import OpenAIModel
from tests.system.real_model.helpers import real_model
from tests.system.real_model.llama_server import LlamaServer, assemble_gguf


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder needs the real server: mark it `real_model`."""
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.real_model)


@pytest.fixture(scope="session")
def gguf() -> Path:
    """The checked model file (assembled once; the package caches it)."""
    given = os.environ.get("ELSAI_REAL_MODEL_GGUF")
    return Path(given) if given else assemble_gguf()


@pytest.fixture(scope="session")
def server_url(gguf: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The shared server's API root: the given one, else a server this session starts."""
    given = os.environ.get("ELSAI_REAL_MODEL_URL")
    if given:
        yield given
        return
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with LlamaServer(gguf, log=log) as server:
        yield server.base_url


@pytest.fixture
def model(server_url: str, gguf: Path) -> OpenAIModel:
    """A fresh provider for one test (its own client and retry policy)."""
    return real_model(server_url, gguf)
