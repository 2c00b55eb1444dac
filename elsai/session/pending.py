"""Write-behind for the one write that may overlap the model call: the after_tools bookmark.

At `after_tools` every message the bookmark names is already durable (messages are written
first), and the next step is a model call, which has no side effects. So the bookmark PUT can
run while the model is called: on S3 that takes one round trip off every tool cycle. It must
still land before anything else is written, so that the store sees writes in exactly the
order the loop made them ("messages first, bookmark last"): every write of the binding, and
the end of the invocation, first calls `settle()`, which waits for the pending write and
re-raises its error there. A failed bookmark write therefore fails the invocation at the next
boundary, as a synchronous write would have, instead of being lost.

Only one write is ever pending, and nothing is left running between invocations (which matters
on Lambda, where a frozen process must not hold a half-sent request).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

__all__ = ["PendingWrite"]


class PendingWrite:
    """At most one storage write running in the background; `settle()` joins it.

    The worker thread is created on first use and reused; each write runs to completion
    before `settle()` returns, so its effects on the binding (new versions) are visible then.
    """

    def __init__(self) -> None:
        self._future: Future[None] | None = None
        self._executor: ThreadPoolExecutor | None = None

    @property
    def pending(self) -> bool:
        """Whether a write was started and not yet settled."""
        return self._future is not None

    def start(self, write: Callable[[], None]) -> None:
        """Settle the previous write, then run `write` in the background."""
        self.settle()
        if self._executor is None:
            self._executor = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="elsai-write-behind"
            )
        self._future = self._executor.submit(write)

    def settle(self) -> None:
        """Wait for the pending write; its exception, if any, is raised here (once)."""
        future, self._future = self._future, None
        if future is not None:
            future.result()

    def close(self) -> None:
        """Settle, then stop the worker thread (a later `start` makes a new one)."""
        try:
            self.settle()
        finally:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None
