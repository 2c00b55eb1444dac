"""The agent on its own, offline: the factory builds it and the greet tool runs once."""

from __future__ import annotations

from pathlib import Path

from hello_agents.main import build

from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.session import FileSessionManager


def test_the_agent_greets_by_name(tmp_path: Path) -> None:
    """One prompt, one greet call, and the scripted model reports its result."""
    config = AgentConfig(
        agent_id="hello",
        session_manager=FileSessionManager(session_id="s1", storage_dir=str(tmp_path)),
        checkpoint=CheckpointConfig(position="both"),
    )
    result = build(config)("Please greet Ada")
    assert str(result).strip() == "Done: Hello, Ada!"
