"""What a session binding needs of the agent it persists: more than hooks see, less than Agent."""

from __future__ import annotations

from typing import Protocol

from elsai.checkpoint.config import CheckpointConfig
from elsai.conversation.base import ConversationManager
from elsai.interrupt.state import InterruptState
from elsai.types import AgentView


class BoundAgentConfig(Protocol):
    """The one setting of an agent's config a binding reads."""

    @property
    def checkpoint(self) -> CheckpointConfig | None:
        """Which boundaries get a bookmark (None: no checkpoints)."""
        ...


class BoundAgent(AgentView, Protocol):
    """What a session binding loads into and saves from: more than hooks see, less than Agent."""

    @property
    def config(self) -> BoundAgentConfig:
        """The agent's configuration (only `checkpoint` is read)."""
        ...

    @property
    def conversation_manager(self) -> ConversationManager:
        """Its window state is persisted in agent.json."""
        ...

    @property
    def interrupts(self) -> InterruptState:
        """Pending interrupts are persisted in agent.json."""
        ...
