"""Tool executors decide only *how* a batch of tool calls is scheduled.

The loop hands over a function that runs one call (hooks, validation, invocation); the
executor runs the batch and returns results in the order of the requests.
"""

from __future__ import annotations

import abc
import asyncio
from collections.abc import Awaitable, Callable, Sequence

from elsai.types import ToolResult, ToolUse

RunOne = Callable[[ToolUse], Awaitable[ToolResult]]


class ToolExecutor(abc.ABC):
    """Decides how the calls of one assistant message run (together or in turn)."""

    @abc.abstractmethod
    async def execute(self, calls: Sequence[ToolUse], run_one: RunOne) -> list[ToolResult]:
        """Run every call through `run_one`; results in request order."""


class ConcurrentToolExecutor(ToolExecutor):
    """Runs all calls of one assistant message at once (the default)."""

    async def execute(self, calls: Sequence[ToolUse], run_one: RunOne) -> list[ToolResult]:
        """Run the calls concurrently; results in request order."""
        if len(calls) == 1:
            return [await run_one(calls[0])]
        return list(await asyncio.gather(*(run_one(call) for call in calls)))


class SequentialToolExecutor(ToolExecutor):
    """Runs calls one after another, for tools that must not overlap."""

    async def execute(self, calls: Sequence[ToolUse], run_one: RunOne) -> list[ToolResult]:
        """Run the calls one after another."""
        return [await run_one(call) for call in calls]


def resolve_executor(value: ToolExecutor | str | None) -> ToolExecutor:
    """The executor for `AgentConfig.tool_executor`: an instance, "concurrent" (default) or "sequential"."""
    if value is None or value == "concurrent":
        return ConcurrentToolExecutor()
    if value == "sequential":
        return SequentialToolExecutor()
    if isinstance(value, ToolExecutor):
        return value
    raise ValueError(
        f"tool_executor must be 'concurrent', 'sequential' or a ToolExecutor, got {value!r}"
    )
