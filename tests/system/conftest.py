"""One LocalRuntime per test module: moto server + the synthesized state machine + real handlers.

Shared by the local-stack folders (serverless, multiagent_serverless): the Lambda children
import that folder's agent module (AGENT_FACTORIES) as their factory, and every real tool run
appends a line to the ledger file named by AGENT_LEDGER, so tests count side effects across
killed and retried processes. Retry waits are shortened to 1 s (`fast_retries`); nothing else
changes.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from elsai.local import LocalRuntime
from tests.system.local_stack import LocalStack

ROOT = Path(__file__).resolve().parents[2]
AGENT_FACTORIES = {
    "serverless": "serverless_agents:build_agent",
    "multiagent_serverless": "ma_agents:build_agent",
}
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")


@pytest.fixture(scope="module")
def stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LocalStack]:
    """The local stack of the requesting test's folder, its children on that folder's path."""
    here = request.path.parent
    ledger = tmp_path_factory.mktemp(here.name) / "ledger.jsonl"
    runtime = LocalRuntime(
        project=ROOT,
        agent_factory=AGENT_FACTORIES[here.name],
        fast_retries=True,
        pythonpath=(str(here),),
        child_env={"AGENT_LEDGER": str(ledger)},
    )
    with runtime:
        yield LocalStack(runtime, ledger)


@pytest.fixture(autouse=True)
def _no_faults_left(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "stack" in request.fixturenames:
        request.getfixturevalue("stack").rt.faults = None
