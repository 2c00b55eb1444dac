"""Agent: the public entry point. It wires parts together; the loop lives in elsai.loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from elsai.agent.config import AgentConfig
from elsai.agent.result import AgentResult
from elsai.agent.state import AgentState
from elsai.agent.stream_events import MessageAddedStreamEvent, StreamEvent
from elsai.errors import ConcurrentInvocationError
from elsai.hooks.events import AfterInvocationEvent, BeforeInvocationEvent, MessageAddedEvent
from elsai.hooks.registry import HookRegistry
from elsai.interrupt.state import InterruptState
from elsai.loop.loop import EventLoop, Invocation, drain
from elsai.loop.messages import user_content_from_prompt
from elsai.loop.persistence import LoopPersistence, NoPersistence
from elsai.models.base import Model
from elsai.tools.executor import resolve_executor
from elsai.tools.registry import ToolRegistry
from elsai.types import Message, ToolSpec

if TYPE_CHECKING:
    from pydantic import BaseModel

    from elsai.agent.stream_events import ResultEvent  # noqa: F401


class Agent:
    """A ReAct agent: `agent(prompt)` runs model calls and tool calls until the model is done."""

    def __init__(
        self,
        model: Model | None = None,
        tools: Sequence[Any] = (),
        system_prompt: str | None = None,
        config: AgentConfig | None = None,
        *,
        messages: Sequence[Message] | None = None,
    ) -> None:
        self.config = config or AgentConfig()
        self.config.validate()
        if model is None:
            from elsai.models.bedrock import BedrockModel

            model = BedrockModel()
        if not isinstance(model, Model):
            raise TypeError(
                f"model must be an elsai Model (e.g. BedrockModel, ScriptedModel), got {model!r}"
            )
        self.model = model
        self.tool_registry = ToolRegistry(tools)
        self.system_prompt = system_prompt
        self.messages: list[Message] = list(messages or [])
        self.state = AgentState(self.config.state)
        self.hooks = HookRegistry()
        for provider in self.config.hooks:
            self.hooks.add_hook(provider)
        if self.config.conversation_manager is None:
            from elsai.conversation.sliding_window import SlidingWindowConversationManager

            self.conversation_manager: Any = SlidingWindowConversationManager()
        else:
            self.conversation_manager = self.config.conversation_manager
        self.tool_executor = resolve_executor(self.config.tool_executor)
        self._lock = threading.Lock()
        self._interrupts = InterruptState()
        self._persistence: LoopPersistence = NoPersistence()
        if self.config.session_manager is not None:
            # Loads messages, state and the bookmark; from here on the binding owns durability.
            self._persistence = self.config.session_manager.bind_agent(self)

    # -- identity --------------------------------------------------------------------------

    @property
    def agent_id(self) -> str:
        return self.config.agent_id

    @property
    def name(self) -> str:
        return self.config.name or self.config.agent_id

    @property
    def session_id(self) -> str | None:
        manager = self.config.session_manager
        return manager.session_id if manager is not None else None

    @property
    def tool_names(self) -> list[str]:
        return list(self.tool_registry.names)

    def tool_specs_for_history(self) -> list[ToolSpec]:
        return self.tool_registry.specs()

    # -- invocation ------------------------------------------------------------------------

    def __call__(self, prompt: Any = None, **kwargs: Any) -> AgentResult:
        """Run one invocation synchronously (works inside a running event loop too)."""
        try:
            asyncio.get_running_loop()
            in_loop = True
        except RuntimeError:
            in_loop = False
        if not in_loop:  # run outside the except block: errors then carry no loop-probe context
            return asyncio.run(self.invoke_async(prompt, **kwargs))
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, self.invoke_async(prompt, **kwargs)).result()

    async def invoke_async(self, prompt: Any = None, **kwargs: Any) -> AgentResult:
        return await drain(self.stream_async(prompt, **kwargs))

    async def stream_async(
        self,
        prompt: Any = None,
        *,
        invocation_id: str | None = None,
        structured_output_model: type[BaseModel] | None = None,
        invocation_state: dict[str, Any] | None = None,
        should_stop: Callable[[], bool] | None = None,
        max_cycles: int | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Stream one invocation's events; the last event is a `ResultEvent`.

        `invocation_id` makes the input exactly-once: if the session already recorded it, the
        input is not appended again and the call resumes instead. `should_stop` is polled at
        each loop boundary; when it returns True the invocation ends with stop_reason "paused"
        and a later invocation resumes from the bookmark.
        """
        if not self._lock.acquire(blocking=False):
            raise ConcurrentInvocationError(
                f"agent {self.agent_id!r} is already running an invocation; agents are not re-entrant. "
                "Await the first call or use a second agent."
            )
        try:
            content = user_content_from_prompt(prompt)
            before = await self.hooks.invoke(
                BeforeInvocationEvent(
                    agent=self, messages=[{"role": "user", "content": content}] if content else []
                )
            )
            content = [b for m in (before.messages or []) for b in m["content"]]
            so_tool = None
            if structured_output_model is not None:
                from elsai.structured_output.tool import StructuredOutputTool

                so_tool = StructuredOutputTool(structured_output_model)
            invocation = Invocation(
                input_content=content,
                invocation_id=invocation_id,
                invocation_state=invocation_state if invocation_state is not None else {},
                structured_output=so_tool,
                structured_output_retries=self.config.structured_output_retries,
                should_stop=should_stop,
                max_cycles=max_cycles,
            )
            result: AgentResult | None = None
            try:
                async for event in EventLoop(self, invocation).run():
                    if type(event).__name__ == "ResultEvent":
                        result = event.result  # type: ignore[attr-defined]
                    yield event
            finally:
                try:
                    await self.hooks.invoke(AfterInvocationEvent(agent=self, result=result))
                finally:
                    self._persistence.end_invocation()
        finally:
            self._lock.release()

    def as_tool(
        self,
        name: str | None = None,
        description: str | None = None,
        *,
        preserve_context: bool = True,
        mode: str | None = None,
    ) -> Any:
        """This agent as a tool for another agent (see elsai.agent.as_tool for the modes)."""
        from elsai.agent.as_tool import agent_as_tool

        return agent_as_tool(self, name, description, preserve_context=preserve_context, mode=mode)  # type: ignore[arg-type]

    async def _append_message(
        self, message: Message, persistence: LoopPersistence, *, invocation_id: str | None = None
    ) -> AsyncIterator[StreamEvent]:
        """The one place a message joins the conversation: memory, store, then hooks."""
        self.messages.append(message)
        persistence.message_appended(message, invocation_id=invocation_id)
        await self.hooks.invoke(MessageAddedEvent(agent=self, message=message))
        yield MessageAddedStreamEvent(message=message)

    def __repr__(self) -> str:
        return f"Agent(agent_id={self.agent_id!r}, model={type(self.model).__name__}, tools={self.tool_names})"
