"""Agent: the public entry point. It wires parts together; the loop lives in elsai.loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from elsai.agent.as_tool import SubAgentTool, agent_as_tool
from elsai.agent.config import AgentConfig
from elsai.errors import ConcurrentInvocationError
from elsai.hooks.events import AfterInvocationEvent, BeforeInvocationEvent
from elsai.hooks.registry import HookRegistry
from elsai.interrupt.state import InterruptState
from elsai.loop.deps import Invocation, LoopDeps
from elsai.loop.events import ResultEvent, StreamEvent
from elsai.loop.loop import EventLoop, drain
from elsai.loop.messages import user_content_from_prompt
from elsai.loop.persistence import LoopPersistence, NoPersistence
from elsai.models.base import Model
from elsai.telemetry.otel import OtelTracing, default_tracing, explicit_tracing
from elsai.tools.executor import ToolExecutor, resolve_executor
from elsai.tools.registry import ToolRegistry
from elsai.types import (
    AgentResult,
    AgentState,
    ContentBlock,
    InvocationMetrics,
    Message,
    ToolChoice,
    ToolSpec,
    check_tool_choice,
    parse_tool_choice,
)

if TYPE_CHECKING:
    from pydantic import BaseModel

    from elsai.structured_output.tool import StructuredOutputTool


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
        self.config: AgentConfig = config or AgentConfig()
        self.config.validate()
        if model is None:
            from elsai.models.bedrock import BedrockModel

            model = BedrockModel()
        if not isinstance(model, Model):
            raise TypeError(
                f"model must be an elsai Model (e.g. BedrockModel, ScriptedModel), got {model!r}"
            )
        self.model: Model = model
        self.tool_registry: ToolRegistry = ToolRegistry(tools)
        try:
            check_tool_choice(parse_tool_choice(self.config.tool_choice), self.tool_registry.names)
        except ValueError:
            self.tool_registry.close()  # MCP servers the registry started must not linger
            raise
        # Tool providers the build started (MCP clients) close with the agent, or when it is
        # garbage collected; ones the caller started stay open for the caller.
        self._finalizer = weakref.finalize(self, self.tool_registry.close)
        self.system_prompt: str | None = system_prompt
        self.messages: list[Message] = list(messages or [])
        self.state: AgentState = AgentState(self.config.state)
        self.hooks: HookRegistry = HookRegistry()
        for provider in self.config.hooks:
            self.hooks.add_hook(provider)
        self._tracing: OtelTracing | None = explicit_tracing(self.config.hooks)
        if self.config.conversation_manager is None:
            from elsai.conversation.sliding_window import SlidingWindowConversationManager

            self.conversation_manager: Any = SlidingWindowConversationManager()
        else:
            self.conversation_manager = self.config.conversation_manager
        self.tool_executor: ToolExecutor = resolve_executor(self.config.tool_executor)
        self._lock = threading.Lock()
        self._interrupts = InterruptState()
        self._persistence: LoopPersistence = NoPersistence()
        if self.config.session_manager is not None:
            # Loads messages, state and the bookmark; from here on the binding owns durability.
            self._persistence = self.config.session_manager.bind_agent(self)

    # -- identity --------------------------------------------------------------------------

    @property
    def agent_id(self) -> str:
        """The durable id inside the session (from the config)."""
        return self.config.agent_id

    @property
    def name(self) -> str:
        """A display name: the config's name, else the agent id."""
        return self.config.name or self.config.agent_id

    @property
    def session_id(self) -> str | None:
        """The session manager's session id; None without one."""
        manager = self.config.session_manager
        return manager.session_id if manager is not None else None

    @property
    def interrupts(self) -> InterruptState:
        """Pending human-in-the-loop interrupts, their responses and finished results."""
        return self._interrupts

    @property
    def tool_names(self) -> list[str]:
        """Names of the registered tools."""
        return list(self.tool_registry.names)

    def attach_tracing(self) -> OtelTracing | None:
        """The OtelTracing this agent emits through, attaching one if the app now has a provider.

        Libraries emit through the OpenTelemetry API once the application has configured a
        tracer provider, so no per-agent wiring is needed: an explicit `OtelTracing` hook wins,
        `AgentConfig(tracing=False)` keeps the automatic one off. Cheap when nothing is set up:
        opentelemetry is never imported here.
        """
        if self._tracing is None and self.config.tracing:
            tracing = default_tracing()
            if tracing is not None:
                self.hooks.add_hook(tracing)
                self._tracing = tracing
        return self._tracing

    def tool_specs_for_history(self) -> list[ToolSpec]:
        """Tool specs to send with a history that contains tool calls (e.g. to summarize it)."""
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
        """Run one invocation and return its result (options as for `stream_async`)."""
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
        tool_choice: ToolChoice | str | None = None,
        tool_choice_first_only: bool | None = None,
    ) -> AsyncIterator[StreamEvent]:
        """Stream one invocation's events; the last event is a `ResultEvent`.

        `invocation_id` makes the input exactly-once: if the session already recorded it, the
        input is not appended again and the call resumes instead. `should_stop` is polled at
        each loop boundary; when it returns True the invocation ends with stop_reason "paused"
        and a later invocation resumes from the bookmark. `tool_choice` and
        `tool_choice_first_only` override the config's for this invocation (see `AgentConfig`).
        """
        so_tool = _structured_output_tool(structured_output_model)
        choice, first_only = self._choose_tool(tool_choice, tool_choice_first_only, so_tool)
        if not self._lock.acquire(blocking=False):
            raise ConcurrentInvocationError(
                f"agent {self.agent_id!r} is already running an invocation; agents are not re-entrant. "
                "Await the first call or use a second agent."
            )
        try:
            self.attach_tracing()
            content = user_content_from_prompt(prompt)
            before = await self.hooks.invoke(
                BeforeInvocationEvent(
                    agent=self, messages=[{"role": "user", "content": content}] if content else []
                )
            )
            invocation = self._invocation(
                [b for m in (before.messages or []) for b in m["content"]],
                invocation_id=invocation_id,
                structured_output=so_tool,
                invocation_state=invocation_state,
                should_stop=should_stop,
                max_cycles=max_cycles,
                tool_choice=choice,
                tool_choice_first_only=first_only,
            )
            result: AgentResult | None = None
            try:
                async for event in EventLoop(self._loop_deps(), invocation).run():
                    if isinstance(event, ResultEvent):
                        result = event.result
                    yield event
            finally:
                try:
                    await self.hooks.invoke(AfterInvocationEvent(agent=self, result=result))
                finally:
                    self._persistence.end_invocation()
        finally:
            self._lock.release()

    def _invocation(
        self,
        content: list[ContentBlock],
        *,
        invocation_id: str | None,
        structured_output: StructuredOutputTool | None,
        invocation_state: dict[str, Any] | None,
        should_stop: Callable[[], bool] | None,
        max_cycles: int | None,
        tool_choice: ToolChoice | None,
        tool_choice_first_only: bool,
    ) -> Invocation:
        return Invocation(
            input_content=content,
            invocation_id=invocation_id,
            invocation_state=invocation_state if invocation_state is not None else {},
            metrics=InvocationMetrics(),
            structured_output=structured_output,
            structured_output_retries=self.config.structured_output_retries,
            should_stop=should_stop,
            max_cycles=max_cycles,
            tool_choice=tool_choice,
            tool_choice_first_only=tool_choice_first_only,
        )

    def _choose_tool(
        self,
        tool_choice: ToolChoice | str | None,
        first_only: bool | None,
        so_tool: StructuredOutputTool | None,
    ) -> tuple[ToolChoice | None, bool]:
        """This invocation's tool choice and first-only flag (else the config's), checked."""
        choice = parse_tool_choice(
            tool_choice if tool_choice is not None else self.config.tool_choice
        )
        names = [*self.tool_registry.names, *([so_tool.name] if so_tool is not None else [])]
        check_tool_choice(choice, names)
        if first_only is None:
            first_only = self.config.tool_choice_first_only
        return choice, first_only

    def _loop_deps(self) -> LoopDeps:
        """What the loop runs on: this agent's parts, handed over explicitly."""
        return LoopDeps(
            agent=self,
            model=self.model,
            system_prompt=self.system_prompt,
            tools=self.tool_registry,
            executor=self.tool_executor,
            hooks=self.hooks,
            conversation=self.conversation_manager,
            interrupts=self._interrupts,
            persistence=self._persistence,
        )

    def as_tool(
        self,
        name: str | None = None,
        description: str | None = None,
        *,
        preserve_context: bool = True,
        mode: str | None = None,
    ) -> SubAgentTool:
        """This agent as a tool for another agent (see elsai.agent.as_tool for the modes)."""
        return agent_as_tool(
            self,
            name,
            description,
            spawn=self._stateless_copy,
            preserve_context=preserve_context,
            mode=mode,  # type: ignore[arg-type]
        )

    def _stateless_copy(self) -> Agent:
        """A fresh agent with this one's model, tools, prompt and ids but no session: a spawn call."""
        return Agent(
            model=self.model,
            tools=list(self.tool_registry),
            system_prompt=self.system_prompt,
            config=AgentConfig(agent_id=self.agent_id, name=self.config.name),
        )

    def close(self) -> None:
        """Close what building this agent opened (e.g. MCP clients and their servers)."""
        self._finalizer()

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Agent(agent_id={self.agent_id!r}, model={type(self.model).__name__}, tools={self.tool_names})"


def _structured_output_tool(output_model: type[BaseModel] | None) -> StructuredOutputTool | None:
    """The internal tool for `structured_output_model` (imported only when asked for)."""
    if output_model is None:
        return None
    from elsai.structured_output.tool import StructuredOutputTool

    return StructuredOutputTool(output_model)
