"""A dedicated event loop on a daemon thread, for the async MCP SDK.

The agent may run in any thread and any event loop (`agent()` uses `asyncio.run`, a Lambda
handler may call it from a pool). The MCP session's streams and task groups belong to one loop,
so they live here and callers reach them with `run_coroutine_threadsafe`. The thread is a daemon:
a process that exits (or is killed) never waits for it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class BackgroundLoop:
    """One asyncio loop running forever on its own thread until `stop()`."""

    def __init__(self, name: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule `coro` on the background loop; the future resolves in any thread."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None) -> T:
        """Block the calling thread for `coro`'s result (cancelled on timeout)."""
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer within {timeout}s") from None

    async def run_async(self, coro: Coroutine[Any, Any, T], timeout: float | None) -> T:
        """Await `coro` (running on the background loop) from another event loop."""
        future = asyncio.wrap_future(self.submit(coro))
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise TimeoutError(f"no answer within {timeout}s") from None

    def stop(self) -> None:
        """Stop the loop and join the thread (never from the loop's own thread)."""
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self._loop.close()
