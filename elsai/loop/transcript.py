"""The one path by which the conversation changes during an invocation.

Appending a message, extending the last user message and answering an orphan toolUse all
happen here, for every caller (model turns, tool results, user input, interrupt resumes,
repairs after a crash): memory first, then the store, then `MessageAddedEvent`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence

from elsai.hooks.events import MessageAddedEvent
from elsai.hooks.registry import HookRegistry
from elsai.loop.events import MessageAddedStreamEvent, StreamEvent
from elsai.loop.messages import append_user_content, orphan_repair
from elsai.loop.persistence import LoopPersistence, invoke_settled
from elsai.types import AgentView, ContentBlock, Message, tool_uses

logger: logging.Logger = logging.getLogger("elsai.session")


class Transcript:
    """Keeps `agent.messages`, the store and the hooks in step."""

    def __init__(self, agent: AgentView, persistence: LoopPersistence, hooks: HookRegistry) -> None:
        self.agent = agent
        self.persistence = persistence
        self.hooks = hooks

    @property
    def last(self) -> Message | None:
        """The last message of the conversation, if any."""
        messages = self.agent.messages
        return messages[-1] if messages else None

    async def append(
        self, message: Message, *, invocation_id: str | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Add `message`: memory, then store, then hooks; streams MessageAddedStreamEvent."""
        self.agent.messages.append(message)
        self.persistence.message_appended(message, invocation_id=invocation_id)
        event = MessageAddedEvent(agent=self.agent, message=message)
        await invoke_settled(self.hooks, self.persistence, event)
        yield MessageAddedStreamEvent(message=message)

    async def add_user_content(
        self, content: Sequence[ContentBlock], *, invocation_id: str | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Add user input; after a user message (toolResult) it merges to keep roles alternating."""
        last = self.last
        if last is not None and last["role"] == "user":
            self.extend_last(content, invocation_id=invocation_id)
            return
        async for event in self.append(
            {"role": "user", "content": list(content)}, invocation_id=invocation_id
        ):
            yield event

    def extend_last(
        self, content: Sequence[ContentBlock], *, invocation_id: str | None = None
    ) -> None:
        """Merge `content` into the last (user) message, in memory and in the store."""
        messages = self.agent.messages
        messages[-1] = append_user_content(messages[-1], content)
        self.persistence.last_message_replaced(messages[-1], invocation_id=invocation_id)

    async def repair_orphan(self) -> AsyncIterator[StreamEvent]:
        """Answer a trailing toolUse that nothing will run with an 'interrupted' error.

        An earlier invocation stopped between a toolUse and its results with nothing to
        resume (a crash without an after_model bookmark, a stream closed mid-tool, a hook
        that raised). Its calls may have run partly, so they are not run again; the answer
        keeps the conversation valid for the model.
        """
        last = self.last
        if last is None or last["role"] != "assistant" or not tool_uses(last):
            return
        repair = orphan_repair(last)
        logger.warning(
            "agent %r in session %r: %d tool call(s) were interrupted and will not be re-run",
            self.agent.agent_id,
            self.agent.session_id,
            len(repair["content"]),
        )
        async for event in self.append(repair):
            yield event
