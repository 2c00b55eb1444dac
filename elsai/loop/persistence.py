"""The one narrow interface through which durability attaches to the loop.

The loop calls these methods at its boundaries and nowhere else. Sessions and checkpoints
implement them (`elsai.session.write.binding.SessionBinding`); without a session manager the
agent uses `NoPersistence`. Exceptions raised here propagate: a failed write fails the
invocation loudly rather than leaving a transcript the store does not have.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from elsai.hooks import HookEvent, HookRegistry
from elsai.types import ContentBlock, Message, Position, ResumePlan

__all__ = ["LoopPersistence", "NoPersistence", "Position", "ResumePlan", "invoke_settled"]

E = TypeVar("E", bound=HookEvent)


class LoopPersistence(Protocol):
    """What the loop asks of durability, at its boundaries only."""

    def begin_invocation(
        self, invocation_id: str | None, input_content: list[ContentBlock] | None = None
    ) -> ResumePlan:
        """Decide how this invocation starts (lease, resume gate, exactly-once input).

        `input_content` lets a reused invocation id be checked against the input it recorded.
        """
        ...

    def message_appended(self, message: Message, *, invocation_id: str | None = None) -> None:
        """A new message was appended; make it durable (messages are written first)."""
        ...

    def last_message_replaced(self, message: Message, *, invocation_id: str | None = None) -> None:
        """The last message was extended in place (user text merged into a toolResult message)."""
        ...

    def boundary(self, position: Position, cycle_index: int) -> bool:
        """A loop boundary was reached: agent state if changed, then the bookmark, last.

        Returns True if a bookmark now covers this boundary, i.e. a later invocation (in any
        process) can resume from exactly here. The loop only pauses at such boundaries.
        """
        ...

    def turn_ended(self) -> None:
        """Clean end_turn: finalize the bookmark (a failure here only warns)."""
        ...

    def settle(self) -> None:
        """Land any write still in flight, raising its error (see `elsai.session.write.pending`).

        A bookmark may overlap what follows its boundary (after_tools: the model call;
        after_model: the tools and their result's write); the loop settles it before hooks
        run there, since they are user code and may look at the store.
        """
        ...

    def save_state(self) -> None:
        """Agent state changed outside a boundary (an interrupt paused the loop): persist it."""
        ...

    def end_invocation(self) -> None:
        """The invocation is over, however it ended: release what it held (the lease)."""
        ...


class NoPersistence:
    """In-memory agents: every boundary is free.

    Its methods are the `LoopPersistence` ones, each doing nothing.
    """

    def begin_invocation(
        self, invocation_id: str | None, input_content: list[ContentBlock] | None = None
    ) -> ResumePlan:
        """Nothing stored: always a fresh start."""
        return ResumePlan()

    def message_appended(self, message: Message, *, invocation_id: str | None = None) -> None:
        """Nothing to write."""
        return None

    def last_message_replaced(self, message: Message, *, invocation_id: str | None = None) -> None:
        """Nothing to write."""
        return None

    def boundary(self, position: Position, cycle_index: int) -> bool:
        """In memory, a finished tool batch is always resumable."""
        return position == "after_tools"

    def turn_ended(self) -> None:
        """Nothing to finalize."""
        return None

    def settle(self) -> None:
        """Nothing in flight."""
        return None

    def save_state(self) -> None:
        """Nothing to write."""
        return None

    def end_invocation(self) -> None:
        """Nothing held."""
        return None


async def invoke_settled(hooks: HookRegistry, persistence: LoopPersistence, event: E) -> E:
    """Fire `event`'s hooks once any bookmark write in flight has landed.

    Bookmarks may overlap the model call and the tools (elsai.session.write.pending); hooks are user
    code that may look at the store, so they see it landed. With no callback for the event
    nothing waits, and the write keeps overlapping.
    """
    if hooks.callbacks_for(event):
        persistence.settle()
    return await hooks.invoke(event)
