"""One model turn: hooks around the call, overflow and hook retries, the reply appended."""

from __future__ import annotations

from typing import Any, NamedTuple, TypeVar

from elsai.errors import ContextWindowOverflowError
from elsai.hooks.events import AfterModelCallEvent, BeforeModelCallEvent, HookEvent
from elsai.loop.deps import Invocation, LoopDeps
from elsai.loop.events import (
    ModelCallStartEvent,
    ReasoningDeltaEvent,
    TextDeltaEvent,
    ToolInputDeltaEvent,
)
from elsai.loop.messages import strip_incomplete_tool_uses
from elsai.loop.persistence import invoke_settled
from elsai.loop.phases import Done, Phase, Relay
from elsai.loop.transcript import Transcript
from elsai.models.base import ModelRequest, ReasoningDelta, TextDelta, ToolInputDelta, ToolUseStart
from elsai.models.stream import MessageAssembler
from elsai.types import Message, StopReason, ToolChoice, Usage, tool_uses

E = TypeVar("E", bound=HookEvent)

MAX_MODEL_RETRIES_BY_HOOK = 5


class ModelTurn(NamedTuple):
    """The assistant message of one model call, and why the model stopped."""

    message: Message
    stop_reason: StopReason
    usage: Usage | None = None


class ModelCaller:
    """Calls the model for one cycle and appends its reply through the transcript."""

    def __init__(self, deps: LoopDeps, invocation: Invocation, transcript: Transcript) -> None:
        self.deps = deps
        self.inv = invocation
        self.transcript = transcript

    async def call(self, cycle: int) -> Phase[ModelTurn]:
        """Call until a reply is accepted; ends with the appended reply as a `ModelTurn`."""
        deps = self.deps
        overflow_retried = False
        hook_retries = 0
        while True:
            await self._hook(BeforeModelCallEvent(agent=deps.agent))
            yield ModelCallStartEvent(cycle_index=cycle)
            attempt = Relay(self._stream())
            try:
                async for event in attempt:
                    yield event
            except ContextWindowOverflowError as exc:
                await self._hook(AfterModelCallEvent(agent=deps.agent, exception=exc))
                if overflow_retried:
                    raise
                overflow_retried = True
                await deps.conversation.reduce_context(deps.agent, exc)
                continue
            except Exception as exc:
                after = await self._hook(AfterModelCallEvent(agent=deps.agent, exception=exc))
                if after.retry and hook_retries < MAX_MODEL_RETRIES_BY_HOOK:
                    hook_retries += 1
                    continue
                raise
            turn = attempt.value
            after = await self._hook(
                AfterModelCallEvent(
                    agent=deps.agent,
                    message=turn.message,
                    stop_reason=turn.stop_reason,
                    usage=turn.usage,
                )
            )
            if after.retry and hook_retries < MAX_MODEL_RETRIES_BY_HOOK:
                hook_retries += 1
                continue
            turn = _well_formed(turn)
            async for added in self.transcript.append(turn.message):
                yield added
            yield Done(turn)
            return

    async def _hook(self, event: E) -> E:
        """Fire a hook around the model call (after a bookmark write in flight lands)."""
        return await invoke_settled(self.deps.hooks, self.deps.persistence, event)

    async def _stream(self) -> Phase[ModelTurn]:
        """One provider call: deltas streamed as events, then the assembled reply."""
        deps, inv = self.deps, self.inv
        assembler = MessageAssembler()
        names: dict[int, tuple[str, str]] = {}
        request = ModelRequest(
            messages=deps.agent.messages,
            tool_specs=self._tool_specs(),
            system_prompt=deps.system_prompt,
            tool_choice=self._tool_choice(),
        )
        inv.metrics.model_calls += 1
        async for event in deps.model.stream(request):
            assembler.feed(event)
            if isinstance(event, TextDelta):
                yield TextDeltaEvent(text=event.text)
            elif isinstance(event, ToolUseStart):
                names[event.index] = (event.tool_use_id, event.name)
            elif isinstance(event, ToolInputDelta):
                use_id, name = names.get(event.index, ("", ""))
                yield ToolInputDeltaEvent(tool_use_id=use_id, name=name, fragment=event.fragment)
            elif isinstance(event, ReasoningDelta) and event.text:
                yield ReasoningDeltaEvent(text=event.text)
        inv.metrics.add_usage(assembler.usage)
        inv.metrics.model_latency_ms += assembler.latency_ms
        yield Done(
            ModelTurn(assembler.message(), assembler.stop_reason or "end_turn", assembler.usage)
        )

    def _tool_specs(self) -> list[Any]:
        specs = self.deps.tools.specs()
        if self.inv.structured_output is not None:
            specs = [*specs, self.inv.structured_output.spec]
        return specs

    def _tool_choice(self) -> ToolChoice | None:
        """Structured output's forcing wins; else the user's choice, if this call gets it.

        "First only" is read off the transcript, not a counter, so a resumed invocation
        forces exactly when the original would have: while no tool result was sent yet.
        """
        so = self.inv.structured_output
        last = self.transcript.last
        if (
            so is not None
            and last is not None
            and any(b.get("text") == so.forcing_prompt()["text"] for b in last["content"])
        ):
            return {"tool": {"name": so.name}}
        choice = self.inv.tool_choice
        if choice is not None and self.inv.tool_choice_first_only and _after_tools(last):
            return None
        return choice


def _after_tools(last: Message | None) -> bool:
    """Whether the model is about to answer tool results (not the user's own input)."""
    return last is not None and any("toolResult" in block for block in last["content"])


def _well_formed(turn: ModelTurn) -> ModelTurn:
    """The reply as the transcript may hold it: no cut-off toolUse, never empty."""
    message, stop_reason = turn.message, turn.stop_reason
    if stop_reason != "tool_use":
        message = strip_incomplete_tool_uses(message)
    elif not tool_uses(message):
        stop_reason = "end_turn"
    if not message["content"]:
        # Providers may return nothing; Converse rejects an empty assistant turn.
        message = {"role": "assistant", "content": [{"text": "(no response)"}]}
    return ModelTurn(message, stop_reason, turn.usage)
