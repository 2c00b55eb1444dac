"""Fixtures for the checkpoint spec tests (helpers live in helpers.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager
from tests.unit.checkpoint.helpers import Ledger


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


@pytest.fixture
def ledger() -> Ledger:
    return Ledger()


@pytest.fixture
def build(store: Path, ledger: Ledger) -> Callable[..., Agent]:
    """build(responses, position="both", session_id="my-job", agent_id="worker", **config)."""

    def make(
        responses: list[Any],
        position: str | None = "both",
        session_id: str = "my-job",
        agent_id: str = "worker",
        manager: Any = None,
        **config: Any,
    ) -> Agent:
        return Agent(
            model=ScriptedModel(responses, record="full"),
            tools=[ledger.make_tool()],
            config=AgentConfig(
                agent_id=agent_id,
                session_manager=manager
                or FileSessionManager(session_id=session_id, storage_dir=str(store)),
                checkpoint=CheckpointConfig(position=position) if position else None,  # type: ignore[arg-type]
                **config,
            ),
        )

    return make
