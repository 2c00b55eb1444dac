"""One LocalRuntime whose agent code lives in a folder the tests rewrite between deploys."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from elsai.local import LocalRuntime
from elsai.local.deploys import Deploy
from tests.system.conftest import ROOT
from tests.system.deploys.agent_source import agent_module


@dataclass
class Deploying:
    """The runtime, the live source folder, and the ledger of real tool runs."""

    rt: LocalRuntime
    source: Path
    ledger_path: Path

    def deploy(self, version: str, **changes: Any) -> Deploy:
        """Rewrite the agent's source to ``version`` (changes: see ``agent_module``), deploy it."""
        text = agent_module(version, **changes)
        (self.source / "versioned_agent.py").write_text(text)
        return self.rt.deploy()

    def ledger(self, session_id: str) -> list[dict[str, Any]]:
        if not self.ledger_path.exists():
            return []
        lines = [json.loads(x) for x in self.ledger_path.read_text().splitlines() if x.strip()]
        return [x for x in lines if x["session_id"] == session_id]


@pytest.fixture(scope="module")
def deploying(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deploying]:
    source = tmp_path_factory.mktemp("agent-source")
    (source / "versioned_agent.py").write_text(agent_module("start"))
    ledger = tmp_path_factory.mktemp("ledger") / "ledger.jsonl"
    runtime = LocalRuntime(
        project=ROOT,
        agent_factory="versioned_agent:build_agent",
        fast_retries=True,
        pythonpath=(str(source),),
        child_env={"AGENT_LEDGER": str(ledger)},
    )
    with runtime:
        yield Deploying(runtime, source, ledger)
    runtime.faults = None
