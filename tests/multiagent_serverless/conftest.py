"""One LocalRuntime per module for the multi-agent jobs: moto + the synthesized ASL + real handlers.

The Lambda children import `ma_agents` (this directory) as their factory; every tool run is
appended to a ledger file so tests count side effects across killed and retried processes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from infra.local import LocalRuntime

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")


@dataclass
class MaStack:
    rt: LocalRuntime
    ledger_path: Path

    def ledger(self, session_id: str) -> list[dict[str, Any]]:
        if not self.ledger_path.exists():
            return []
        lines = [json.loads(x) for x in self.ledger_path.read_text().splitlines() if x.strip()]
        return [x for x in lines if x["session_id"] == session_id]

    def node_slices(self, job_id: str) -> list[Any]:
        return [
            r for r in self.rt.invocations
            if r.info.job_id == job_id and r.info.action == "node_slice"
        ]  # fmt: skip

    def cursor(self, session_id: str) -> dict[str, Any]:
        from elsai.session import keys

        return dict(self.rt.read_json(keys.multi_agent_key(session_id)))


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
