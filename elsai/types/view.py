"""AgentView: the part of an agent that hooks, tools and conversation managers may see.

Lower layers type against this protocol instead of importing `Agent`, so the dependency
arrows point down only. The real `Agent` satisfies it structurally.
"""

from __future__ import annotations

from typing import Any, Protocol

from elsai.types.messages import Message
from elsai.types.state import AgentState


class InterruptsView(Protocol):
    """What a tool or a before-tool hook may do with the agent's interrupts."""

    @property
    def active(self) -> bool:
        """True while interrupts wait for human responses."""
        ...

    def raise_or_answer(self, interrupt: Any) -> Any:
        """The response to `interrupt` if one was given; otherwise pause the tool."""
        ...


class AgentView(Protocol):
    """A read-only window on the agent (its `messages` list may be edited in place).

    Conversation managers shrink `messages`; tools read and write `state`; tools and hooks
    raise interrupts. Nothing else of the agent is reachable from below the loop.
    """

    messages: list[Message]

    @property
    def state(self) -> AgentState:
        """The agent's JSON key-value state (persisted with the agent)."""
        ...

    @property
    def agent_id(self) -> str:
        """The agent's durable id inside its session."""
        ...

    @property
    def name(self) -> str:
        """A display name (defaults to the agent id)."""
        ...

    @property
    def session_id(self) -> str | None:
        """The session id, or None for an agent without a session manager."""
        ...

    @property
    def interrupts(self) -> InterruptsView:
        """Pending human-in-the-loop interrupts and their responses."""
        ...
