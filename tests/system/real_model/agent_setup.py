"""The agent of the kill test, built the same way by the child and by the parent's rebuild."""

from __future__ import annotations

import os
from pathlib import Path

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.session import FileSessionManager
from tests.system.real_model.helpers import real_model

PROMPT = "How many people live in Paris? Use the population tool."
SESSION_ID = "real-kill"
AGENT_ID = "researcher"


def build_agent(base_url: str, gguf: str, session_dir: str, tool_log: str | None) -> Agent:
    """One `population` tool, forced on the first call; every tool run appends to `tool_log`."""

    @tool
    def population(city: str) -> str:
        """How many people live in a city."""
        if tool_log is not None:
            with open(tool_log, "a") as f:
                f.write(f"{city}\n")
                f.flush()
                os.fsync(f.fileno())
        return f"{city}: 2,100,000 people"

    config = AgentConfig(
        agent_id=AGENT_ID,
        session_manager=FileSessionManager(SESSION_ID, session_dir),
        checkpoint=CheckpointConfig(position="both"),
        tool_choice={"tool": {"name": "population"}},
        tool_choice_first_only=True,
    )
    return Agent(model=real_model(base_url, Path(gguf)), tools=[population], config=config)
