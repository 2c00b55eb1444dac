"""Runs one batch of tool calls: hooks around each call, events streamed as they happen."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from elsai.agent.stream_events import StreamEvent, ToolEndEvent, ToolStartEvent
from elsai.hooks.events import AfterToolCallEvent, BeforeToolCallEvent
from elsai.interrupt.model import Interrupt, InterruptSignal
from elsai.tools.base import AgentTool, error_result
from elsai.tools.context import ToolContext
from elsai.types import ToolResult, ToolUse

if TYPE_CHECKING:
    from elsai.agent.agent import Agent
    from elsai.loop.loop import Invocation

_DONE = object()


class ToolRunner:
    def __init__(self, agent: Agent, invocation: Invocation) -> None:
        self.agent = agent
        self.inv = invocation
        #: Interrupts raised by the last batch (its interrupted calls have no result).
        self.raised: list[Interrupt] = []

    def _lookup(self, name: str) -> AgentTool | None:
        so = self.inv.structured_output
        if so is not None and name == so.name:
            return so
        return self.agent.tool_registry.get(name)

    async def run_batch(
        self, uses: list[ToolUse], results: list[ToolResult]
    ) -> AsyncIterator[StreamEvent]:
        """Run `uses` with the agent's executor; fills `results` in request order."""
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self.raised = []

        async def run_one(use: ToolUse) -> ToolResult:
            queue.put_nowait(ToolStartEvent(tool_use=use))
            result = await self._call(use)
            if result is not None:
                queue.put_nowait(ToolEndEvent(tool_use=use, result=result))
            return result  # type: ignore[return-value]

        async def run_all() -> list[ToolResult]:
            try:
                return await self.agent.tool_executor.execute(uses, run_one)
            finally:
                queue.put_nowait(_DONE)

        task = asyncio.ensure_future(run_all())
        try:
            while (event := await queue.get()) is not _DONE:
                yield event
            results.extend(await task)
        finally:
            if not task.done():
                task.cancel()

    async def _call(self, use: ToolUse) -> ToolResult | None:
        """One call with its hooks; None if it raised an interrupt (it did not complete)."""
        finished = self.agent._interrupts.completed.get(use["toolUseId"])
        if finished is not None:
            return finished  # completed before an interrupt paused its batch: never re-run
        try:
            return await self._call_with_hooks(use)
        except InterruptSignal as signal:
            self.raised.append(signal.interrupt)
            return None

    async def _call_with_hooks(self, use: ToolUse) -> ToolResult:
        agent, inv = self.agent, self.inv
        before = await agent.hooks.invoke(
            BeforeToolCallEvent(
                agent=agent,
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
            available = ", ".join(sorted(agent.tool_registry.names)) or "none"
            result = error_result(
                use["toolUseId"], f"Unknown tool {use['name']!r}. Available tools: {available}."
            )
        else:
            context = ToolContext(tool_use=call, agent=agent, invocation_state=inv.invocation_state)
            try:
                result = await tool.invoke(call, context)
            except Exception as exc:  # tools should not raise; a broken one must not kill the loop
                exception = exc
                result = error_result(use["toolUseId"], f"Error: {type(exc).__name__}: {exc}")
        after = await agent.hooks.invoke(
            AfterToolCallEvent(
                agent=agent,
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
