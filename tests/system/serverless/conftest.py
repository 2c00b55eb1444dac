"""One LocalRuntime per test module: moto server + the synthesized state machine + real handlers.

The agent children import `serverless_agents` (this directory) as their factory and append
every real tool execution to a ledger file, so tests count side effects across killed and
retried processes. Retry waits are shortened to 1 s (`fast_retries`); nothing else changes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.system.serverless.helpers import Stack

from elsai.local import LocalRuntime

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    ledger = tmp_path_factory.mktemp("serverless") / "ledger.jsonl"
    runtime = LocalRuntime(
        root=ROOT,
        agent_factory="serverless_agents:build_agent",
        fast_retries=True,
        pythonpath=(str(HERE),),
        child_env={"SERVERLESS_LEDGER": str(ledger)},
    )
    with runtime:
        yield Stack(runtime, ledger)


@pytest.fixture(autouse=True)
def _no_faults_left(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "stack" in request.fixturenames:
        request.getfixturevalue("stack").rt.faults = None
