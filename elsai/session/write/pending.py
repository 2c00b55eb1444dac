"""Write-behind for the bookmark writes that may overlap the work after their boundary.

The bookmark is the last write of a boundary and the one the next step never needs:

- at `after_tools` every message the bookmark names is durable, and the next step is a model
  call, which has no side effects: the PUT overlaps the call;
- at `after_model` the assistant toolUse message is durable (so a tool never runs before the
  request that asked for it is stored), and the tools then run: the PUT overlaps them, and the
  tool-result message write too, since that message is not one the bookmark names.

Each overlapped write still lands before the writes that must follow it. Every boundary, and
the end of the invocation, first calls `settle()`, which waits for the pending write and
re-raises its error there; so bookmarks land in order (each replaces the previous one's
version), and a failed one fails the invocation at the next boundary, as a synchronous write
would have, instead of being lost. A message write settles an after_tools bookmark first
(`settle_for_message`): the reply after it waits, and nothing is written after a failed one.
It does not wait for an after_model bookmark: the bookmark names only messages already
durable, whichever of the two lands first, and a crash with the result stored and that
bookmark lost leaves the previous bookmark, which the resume gate denies (its message count
is behind), so the stored result is used and the tool is not run again.

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
        self._messages_may_pass = False

    @property
    def pending(self) -> bool:
        """Whether a write was started and not yet settled."""
        return self._future is not None

    def start(self, write: Callable[[], None], *, messages_may_pass: bool = False) -> None:
        """Settle the previous write, then run `write` in the background.

        `messages_may_pass`: a message write need not wait for this one (`settle_for_message`).
        """
        self.settle()
        if self._executor is None:
            self._executor = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="elsai-write-behind"
            )
        self._future = self._executor.submit(write)
        self._messages_may_pass = messages_may_pass

    def settle(self) -> None:
        """Wait for the pending write; its exception, if any, is raised here (once)."""
        future, self._future = self._future, None
        if future is not None:
            future.result()

    def settle_for_message(self) -> None:
        """Before a message write: settle, unless the pending write lets messages pass it."""
        if not self._messages_may_pass:
            self.settle()

    def close(self) -> None:
        """Settle, then stop the worker thread (a later `start` makes a new one)."""
        try:
            self.settle()
        finally:
            if self._executor is not None:
                self._executor.shutdown(wait=True)
                self._executor = None
