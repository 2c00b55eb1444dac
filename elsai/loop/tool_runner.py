"""Runs one batch of tool calls: hooks around each call, events streamed as they happen."""

from __future__ import annotations

import asyncio
from typing import Any, NamedTuple, TypeVar

from elsai.hooks.events import AfterToolCallEvent, BeforeToolCallEvent
from elsai.interrupt.model import Interrupt, InterruptSignal
from elsai.loop.deps import Invocation, LoopDeps
from elsai.loop.events import ToolEndEvent, ToolStartEvent
from elsai.loop.persistence import invoke_settled
from elsai.loop.phases import Done, Phase
from elsai.tools.base import AgentTool, error_result
from elsai.tools.context import ToolContext
from elsai.types import ToolResult, ToolUse

_DONE = object()
E = TypeVar("E", BeforeToolCallEvent, AfterToolCallEvent)


class BatchOutcome(NamedTuple):
    """What a batch produced, in request order.

    `results` has one entry per call: None where the call raised an interrupt and so did
    not complete; `raised` holds those interrupts.
    """

    results: list[ToolResult | None]
    raised: list[Interrupt]

    @property
    def finished(self) -> list[ToolResult]:
        """What a batch produced, in request order."""
        """Results of the calls that completed."""
        return [r for r in self.results if r is not None]


class ToolRunner:
    """Runs a batch with the agent's executor; each call goes through the tool hooks."""

    def __init__(self, deps: LoopDeps, invocation: Invocation) -> None:
        self.deps = deps
        self.inv = invocation

    def _lookup(self, name: str) -> AgentTool | None:
        so = self.inv.structured_output
        if so is not None and name == so.name:
            return so
        return self.deps.tools.get(name)

    async def run_batch(self, uses: list[ToolUse]) -> Phase[BatchOutcome]:
        """Run `uses`, streaming start/end events; ends with the batch's `BatchOutcome`."""
        queue: asyncio.Queue[Any] = asyncio.Queue()
        raised: list[Interrupt] = []

        async def run_one(use: ToolUse) -> ToolResult:
            queue.put_nowait(ToolStartEvent(tool_use=use))
            result = await self._call(use)
            if isinstance(result, Interrupt):
                raised.append(result)
                return None  # type: ignore[return-value]  # executors pass results through
            queue.put_nowait(ToolEndEvent(tool_use=use, result=result))
            return result

        async def run_all() -> list[ToolResult]:
            try:
                return await self.deps.executor.execute(uses, run_one)
            finally:
                queue.put_nowait(_DONE)

        task = asyncio.ensure_future(run_all())
        try:
            while (event := await queue.get()) is not _DONE:
                yield event
            results: list[ToolResult | None] = list(await task)
        finally:
            if not task.done():
                task.cancel()
        yield Done(BatchOutcome(results=results, raised=raised))

    async def _call(self, use: ToolUse) -> ToolResult | Interrupt:
        """One call with its hooks; the interrupt it raised if it did not complete."""
        finished = self.deps.interrupts.completed.get(use["toolUseId"])
        if finished is not None:
            return finished  # completed before an interrupt paused its batch: never re-run
        try:
            return await self._call_with_hooks(use)
        except InterruptSignal as signal:
            return signal.interrupt

    async def _hook(self, event: E) -> E:
        """Fire a hook around a tool call (after a bookmark write in flight lands)."""
        return await invoke_settled(self.deps.hooks, self.deps.persistence, event)

    async def _call_with_hooks(self, use: ToolUse) -> ToolResult:
        deps, inv = self.deps, self.inv
        before = await self._hook(
            BeforeToolCallEvent(
                agent=deps.agent,
                tool_use=use,
                selected_tool=self._lookup(use["name"]),
                invocation_state=inv.invocation_state,
            )
        )
        tool, call = before.selected_tool, before.tool_use or use
        exception: BaseException | None = None
        if before.cancel_tool:
            reason = (
                before.cancel_tool
                if isinstance(before.cancel_tool, str)
                else "The tool call was cancelled."
            )
            result = error_result(use["toolUseId"], reason)
        elif tool is None:
            available = ", ".join(sorted(deps.tools.names)) or "none"
            result = error_result(
                use["toolUseId"], f"Unknown tool {use['name']!r}. Available tools: {available}."
            )
        else:
            context = ToolContext(
                tool_use=call, agent=deps.agent, invocation_state=inv.invocation_state
            )
            try:
                result = await tool.invoke(call, context)
            except Exception as exc:  # tools should not raise; a broken one must not kill the loop
                exception = exc
                result = error_result(use["toolUseId"], f"Error: {type(exc).__name__}: {exc}")
        after = await self._hook(
            AfterToolCallEvent(
                agent=deps.agent,
                tool_use=call,
                selected_tool=tool,
                invocation_state=inv.invocation_state,
                result=result,
                exception=exception,
            )
        )
        final = after.result or result
        final = {**final, "toolUseId": use["toolUseId"]}
        inv.metrics.count_tool(use["name"], final.get("status") == "error")
        return final
