"""The ReAct loop: flat and iterative, with every persistence boundary in `run`.

One invocation is a `while` loop of cycles (model call → tools). Nothing recurses, so a
10,000-cycle invocation keeps a constant stack. The three durable boundaries are marked
`BOUNDARY` below and are the only places the loop talks to `LoopPersistence`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from elsai.agent.result import AgentResult, InvocationMetrics
from elsai.agent.stream_events import (
    ModelCallStartEvent,
    ReasoningDeltaEvent,
    ResultEvent,
    ResumeEvent,
    StreamEvent,
    TextDeltaEvent,
    ToolInputDeltaEvent,
)
from elsai.errors import ContextWindowOverflowError, StructuredOutputError
from elsai.hooks.events import AfterModelCallEvent, BeforeModelCallEvent
from elsai.interrupt.model import Interrupt, InterruptError
from elsai.loop.messages import append_user_content, orphan_repair, strip_incomplete_tool_uses
from elsai.loop.tool_runner import ToolRunner
from elsai.models.base import ModelRequest, ReasoningDelta, TextDelta, ToolInputDelta, ToolUseStart
from elsai.models.stream import MessageAssembler
from elsai.types import ContentBlock, Message, StopReason, tool_uses

if TYPE_CHECKING:
    from elsai.agent.agent import Agent
    from elsai.structured_output.tool import StructuredOutputTool

MAX_MODEL_RETRIES_BY_HOOK = 5


@dataclass
class Invocation:
    """Per-invocation state; discarded when the invocation ends."""

    input_content: list[ContentBlock]
    invocation_id: str | None = None
    invocation_state: dict[str, Any] = field(default_factory=dict)
    structured_output: StructuredOutputTool | None = None
    structured_output_retries: int = 3
    should_stop: Callable[[], bool] | None = None
    max_cycles: int | None = None
    metrics: InvocationMetrics = field(default_factory=InvocationMetrics)


class EventLoop:
    def __init__(self, agent: Agent, invocation: Invocation) -> None:
        self.agent = agent
        self.inv = invocation
        self.persistence = agent._persistence
        self.tools = ToolRunner(agent, invocation)
        self.cycle = 0
        self.interrupted: list[Interrupt] = []

    async def run(self) -> AsyncIterator[StreamEvent]:
        agent, inv, store = self.agent, self.inv, self.persistence
        started = time.perf_counter()
        plan = store.begin_invocation(inv.invocation_id, inv.input_content)
        new_content = [] if plan.input_already_recorded else inv.input_content
        resumed = plan.position is not None
        self.cycle = plan.cycle_index if resumed else 0
        message: Message | None = None
        stop_reason: StopReason = "end_turn"

        paused = False
        if agent._interrupts.active:
            # Human-in-the-loop answers: not a crash resume. The interrupted batch re-runs
            # (finished tools reuse their stored results) and sees the responses.
            agent._interrupts.accept_responses(inv.input_content)
            new_content = []
            async for event in self._run_tools(agent.messages[-1], queued=[]):
                yield event
            self.cycle += 1
        elif any("interruptResponse" in b for b in new_content):
            raise InterruptError(
                "interrupt responses were given but this agent has no pending interrupts"
            )
        elif plan.position == "after_model":
            # Active mid-tool bookmark: the trailing assistant toolUse message is pending.
            # Its tools run first; the new input is queued into the same user message.
            pending = tool_uses(agent.messages[-1])
            yield ResumeEvent(position="after_model", pending_tools=len(pending))
            async for event in self._run_tools(agent.messages[-1], queued=new_content):
                yield event
            new_content = []
            self.cycle += 1
            paused = self._stop_requested()  # the after_tools boundary just reached is resumable
        elif plan.position == "after_tools":
            yield ResumeEvent(position="after_tools", pending_tools=0)
            self.cycle += 1
        elif (
            agent.messages
            and agent.messages[-1]["role"] == "assistant"
            and tool_uses(agent.messages[-1])
        ):
            # An earlier invocation stopped between a toolUse and its results with nothing to
            # resume (a stream closed mid-tool, a hook that raised). Its calls may have run
            # partly, so they are answered as interrupted rather than run again; this keeps the
            # conversation valid for the model. (Session bindings repair stored orphans alike.)
            async for event in agent._append_message(orphan_repair(agent.messages[-1]), store):
                yield event

        if new_content:
            async for event in self._add_user_content(new_content):
                yield event

        if paused:
            stop_reason = "paused"
            message = agent.messages[-1]
        while not (self.interrupted or paused):
            if not agent.messages or agent.messages[-1]["role"] != "user":
                # Nothing to answer (e.g. `agent()` on a finished conversation, or a retry after a
                # crash that came after the final answer was stored but before the bookmark was
                # finalized): the turn is over, so make the bookmark say so.
                message = agent.messages[-1] if agent.messages else None
                if message is not None:
                    store.turn_ended()
                break
            if inv.max_cycles is not None and inv.metrics.cycles >= inv.max_cycles:
                raise RuntimeError(f"invocation exceeded max_cycles={inv.max_cycles}")

            async for event in self._call_model():
                yield event
            message, stop_reason = self._last_message, self._last_stop_reason
            inv.metrics.cycles += 1

            if stop_reason == "tool_use" and tool_uses(message):
                # BOUNDARY after_model: assistant toolUse message is durable, tools not yet run.
                resumable = store.boundary("after_model", self.cycle)
                if resumable and self._stop_requested():
                    stop_reason = "paused"
                    break
                async for event in self._run_tools(message, queued=[]):
                    yield event
                if self.interrupted:
                    break
                if inv.structured_output is not None and inv.structured_output.value is not None:
                    stop_reason = "end_turn"
                    agent.conversation_manager.apply_management(agent)
                    store.turn_ended()
                    break
                self.cycle += 1
                if self._stop_requested():
                    stop_reason = "paused"
                    break
                continue

            if inv.structured_output is not None and inv.structured_output.value is None:
                self._check_structured_output_budget()
                async for event in self._add_user_content([inv.structured_output.forcing_prompt()]):  # type: ignore[list-item]
                    yield event
                continue
            # The window holds after every invocation, not only after tool cycles.
            agent.conversation_manager.apply_management(agent)
            # BOUNDARY end_turn: finalize the bookmark as completed.
            store.turn_ended()
            break

        if self.interrupted:
            stop_reason = "interrupt"
            message = agent.messages[-1]
        inv.metrics.latency_ms = (time.perf_counter() - started) * 1000
        result = AgentResult(
            message=message,
            stop_reason=stop_reason,
            metrics=inv.metrics,
            structured_output=inv.structured_output.value if inv.structured_output else None,
            resumed_from_checkpoint=resumed,
            resume_position=plan.position,
            interrupts=list(self.interrupted),
        )
        yield ResultEvent(result=result)

    # -- model ---------------------------------------------------------------------------

    async def _call_model(self) -> AsyncIterator[StreamEvent]:
        agent, inv = self.agent, self.inv
        overflow_retried = False
        hook_retries = 0
        while True:
            await agent.hooks.invoke(BeforeModelCallEvent(agent=agent))
            yield ModelCallStartEvent(cycle_index=self.cycle)
            assembler = MessageAssembler()
            names: dict[int, tuple[str, str]] = {}
            try:
                request = ModelRequest(
                    messages=agent.messages,
                    tool_specs=self._tool_specs(),
                    system_prompt=agent.system_prompt,
                    tool_choice=self._tool_choice(),
                )
                inv.metrics.model_calls += 1
                async for event in agent.model.stream(request):
                    assembler.feed(event)
                    if isinstance(event, TextDelta):
                        yield TextDeltaEvent(text=event.text)
                    elif isinstance(event, ToolUseStart):
                        names[event.index] = (event.tool_use_id, event.name)
                    elif isinstance(event, ToolInputDelta):
                        use_id, name = names.get(event.index, ("", ""))
                        yield ToolInputDeltaEvent(
                            tool_use_id=use_id, name=name, fragment=event.fragment
                        )
                    elif isinstance(event, ReasoningDelta) and event.text:
                        yield ReasoningDeltaEvent(text=event.text)
            except ContextWindowOverflowError as exc:
                await agent.hooks.invoke(AfterModelCallEvent(agent=agent, exception=exc))
                if overflow_retried:
                    raise
                overflow_retried = True
                await agent.conversation_manager.reduce_context(agent, exc)
                continue
            except Exception as exc:
                after = await agent.hooks.invoke(AfterModelCallEvent(agent=agent, exception=exc))
                if after.retry and hook_retries < MAX_MODEL_RETRIES_BY_HOOK:
                    hook_retries += 1
                    continue
                raise
            message = assembler.message()
            stop_reason: StopReason = assembler.stop_reason or "end_turn"
            inv.metrics.add_usage(assembler.usage)
            inv.metrics.model_latency_ms += assembler.latency_ms
            after = await agent.hooks.invoke(
                AfterModelCallEvent(agent=agent, message=message, stop_reason=stop_reason)
            )
            if after.retry and hook_retries < MAX_MODEL_RETRIES_BY_HOOK:
                hook_retries += 1
                continue
            if stop_reason != "tool_use":
                message = strip_incomplete_tool_uses(message)
            elif not tool_uses(message):
                stop_reason = "end_turn"
            if not message["content"]:
                # Providers may return nothing; Converse rejects an empty assistant turn.
                message = {"role": "assistant", "content": [{"text": "(no response)"}]}
            async for added in agent._append_message(message, self.persistence):
                yield added
            self._last_message, self._last_stop_reason = message, stop_reason
            return

    def _tool_specs(self) -> list[Any]:
        specs = self.agent.tool_registry.specs()
        if self.inv.structured_output is not None:
            specs = [*specs, self.inv.structured_output.spec]
        return specs

    def _tool_choice(self) -> Any:
        so = self.inv.structured_output
        last = self.agent.messages[-1] if self.agent.messages else None
        if (
            so is not None
            and last is not None
            and any(b.get("text") == so.forcing_prompt()["text"] for b in last["content"])
        ):
            return {"tool": {"name": so.name}}
        return None

    def _check_structured_output_budget(self) -> None:
        so = self.inv.structured_output
        assert so is not None
        so.failures += 1
        self._raise_if_structured_output_exhausted()

    def _raise_if_structured_output_exhausted(self) -> None:
        so, retries = self.inv.structured_output, self.inv.structured_output_retries
        if so is not None and so.value is None and so.failures > retries:
            raise StructuredOutputError(
                f"the model did not produce a valid {so.name} after {retries} retries"
            )

    # -- tools ---------------------------------------------------------------------------

    async def _run_tools(
        self, assistant: Message, queued: list[ContentBlock]
    ) -> AsyncIterator[StreamEvent]:
        results: list[Any] = []
        async for event in self.tools.run_batch(tool_uses(assistant), results):
            yield event
        if self.tools.raised:
            # Some tools asked for human input: keep what finished, persist, and stop.
            state = self.agent._interrupts
            state.completed.update({r["toolUseId"]: r for r in results if r is not None})
            state.pending = {i.id: i for i in self.tools.raised}
            state.responses = {k: v for k, v in state.responses.items() if k in state.pending}
            self.interrupted = list(self.tools.raised)
            self.persistence.save_state()
            return
        self.agent._interrupts.clear()
        content: list[ContentBlock] = [{"toolResult": r} for r in results]
        content.extend(queued)
        async for event in self.agent._append_message(
            {"role": "user", "content": content},
            self.persistence,
            invocation_id=self.inv.invocation_id if queued else None,
        ):
            yield event
        # BOUNDARY after_tools: tool results are durable.
        self.persistence.boundary("after_tools", self.cycle)
        self.agent.conversation_manager.apply_management(self.agent)
        # Checked only now, so a failed structured output still leaves every toolUse answered.
        self._raise_if_structured_output_exhausted()

    # -- input ---------------------------------------------------------------------------

    async def _add_user_content(self, content: list[ContentBlock]) -> AsyncIterator[StreamEvent]:
        """Append user input; after a user message (toolResult) it merges to keep roles alternating."""
        messages = self.agent.messages
        if messages and messages[-1]["role"] == "user":
            messages[-1] = append_user_content(messages[-1], content)
            self.persistence.last_message_replaced(
                messages[-1], invocation_id=self.inv.invocation_id
            )
            return
        async for event in self.agent._append_message(
            {"role": "user", "content": list(content)},
            self.persistence,
            invocation_id=self.inv.invocation_id,
        ):
            yield event

    def _stop_requested(self) -> bool:
        check = self.inv.should_stop
        return bool(check and check())


async def drain(stream: AsyncIterator[StreamEvent]) -> AgentResult:
    result: AgentResult | None = None
    async for event in stream:
        if isinstance(event, ResultEvent):
            result = event.result
    assert result is not None
    return result
