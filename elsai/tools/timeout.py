"""Per-tool timeouts: a tool past its time becomes an error result, and the loop goes on.

A hung tool must not carry a Lambda slice into its hard timeout (the retry would pay for the
whole slice again), and the model can often do something useful with "that timed out".

What a timeout can and cannot stop:

- an async tool is cancelled at its next `await` (its `finally` blocks run);
- a sync tool runs in a thread, and Python cannot kill a thread. On timeout the thread is
  *abandoned*: it keeps running until the function returns, and whatever it returns or raises
  is discarded. It is a daemon thread of its own (not the event loop's executor), so neither
  the end of the invocation nor interpreter exit waits for it. Its side effects may still
  happen after the model was told it timed out; tools with side effects should be idempotent
  (`ToolContext.idempotency_key`), as they must be for crash resumes anyway;
- an async tool that blocks the event loop without awaiting cannot be interrupted at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import math
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from elsai.errors import ToolError
from elsai.tools.base import AgentTool, WrappedTool, error_result
from elsai.tools.context import ToolContext
from elsai.types import ToolResult, ToolUse

T = TypeVar("T")


class ToolTimeoutError(ToolError):
    """A tool ran past its timeout; its result, if it ever comes, is discarded."""

    def __init__(self, name: str, seconds: float) -> None:
        """Name the tool and the limit in the message the model will see."""
        super().__init__(
            f"tool {name!r} timed out after {seconds:g} s; it was abandoned and its result, "
            "if any, is discarded"
        )
        self.tool_name = name
        self.seconds = seconds


def validate_timeout(seconds: float | None) -> float | None:
    """None (no limit) or a finite number of seconds above zero; anything else is refused."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise TypeError(f"tool timeout must be a number of seconds, got {seconds!r}")
    if not (seconds > 0 and math.isfinite(seconds)):
        raise ValueError(f"tool timeout must be a finite number of seconds > 0, got {seconds!r}")
    return float(seconds)


async def call_with_timeout(
    name: str, seconds: float | None, call: Callable[[], Awaitable[T]]
) -> T:
    """Await `call()`, raising ToolTimeoutError once `seconds` pass (None: no limit).

    Only the deadline becomes ToolTimeoutError: a TimeoutError the tool raises by itself
    passes through unchanged.
    """
    if seconds is None:
        return await call()
    scope = asyncio.timeout(seconds)
    try:
        async with scope:
            return await call()
    except TimeoutError:
        if scope.expired():
            raise ToolTimeoutError(name, seconds) from None
        raise


async def run_in_daemon_thread(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Like `asyncio.to_thread`, but in a daemon thread of its own that can be abandoned.

    The caller's context variables are copied into the thread, as `to_thread` does.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():  # cancelled by a timeout: nobody wants the outcome
            outcome()

    def target() -> None:
        deliver: Callable[[], None]
        try:
            result = context.run(func, *args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            deliver = functools.partial(settle, functools.partial(future.set_exception, exc))
        else:
            deliver = functools.partial(settle, functools.partial(future.set_result, result))
        with contextlib.suppress(RuntimeError):  # the loop is closed: the result is abandoned
            loop.call_soon_threadsafe(deliver)

    name = getattr(func, "__name__", "tool")
    threading.Thread(target=target, name=f"elsai-tool-{name}", daemon=True).start()
    return await future


class TimeoutTool(WrappedTool):
    """Any AgentTool with a time limit around its `invoke` (for tools `@tool` did not build).

    A timeout becomes an error result for the model, like every other tool failure.
    """

    def __init__(self, inner: AgentTool, seconds: float) -> None:
        """Wrap `inner`; `seconds` must be a finite number above zero."""
        checked = validate_timeout(seconds)
        assert checked is not None
        super().__init__(inner)
        self.timeout = checked

    async def invoke(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        """Run the wrapped tool; past the timeout, cancel it and report the timeout."""
        try:
            return await call_with_timeout(
                self.name, self.timeout, lambda: self.inner.invoke(tool_use, context)
            )
        except ToolTimeoutError as exc:
            return error_result(tool_use.get("toolUseId", ""), f"Error: {exc}")


def with_default_timeout(tool: AgentTool, seconds: float) -> AgentTool:
    """`tool` limited to `seconds` unless it already has a timeout of its own.

    Tools built by `@tool` get a copy with the timeout (so sync ones run in an abandonable
    thread); any other AgentTool is wrapped in TimeoutTool.
    """
    if getattr(tool, "timeout", None) is not None:
        return tool
    copy_with = getattr(tool, "with_timeout", None)
    if callable(copy_with):
        limited = copy_with(seconds)
        if isinstance(limited, AgentTool):
            return limited
    return TimeoutTool(tool, seconds)
