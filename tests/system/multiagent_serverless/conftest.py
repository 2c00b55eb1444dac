"""One LocalRuntime per module for the multi-agent jobs: moto + the synthesized ASL + real handlers.

The Lambda children import `ma_agents` (this directory) as their factory; every tool run is
appended to a ledger file so tests count side effects across killed and retried processes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.system.local_stack import LocalStack

from elsai.local import LocalRuntime

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")


@pytest.fixture(scope="module")
def ma(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MaStack]:
    ledger = tmp_path_factory.mktemp("multiagent") / "ledger.jsonl"
    runtime = LocalRuntime(
        root=ROOT,
        agent_factory="ma_agents:build_agent",
        fast_retries=True,
        pythonpath=(str(HERE),),
        child_env={"MA_LEDGER": str(ledger)},
    )
    with runtime:
        yield MaStack(runtime, ledger)


@pytest.fixture(autouse=True)
def _no_faults_left(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "ma" in request.fixturenames:
        request.getfixturevalue("ma").rt.faults = None
