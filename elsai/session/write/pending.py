"""Write-behind for the bookmark writes that may overlap the work after their boundary.

The bookmark is the last write of a boundary and the one the next step never needs:

- at `after_tools` every message the bookmark names is durable, and the next step is a model
  call, which has no side effects: the write overlaps the call, and the write of its reply;
- at `after_model` (opt-in, `overlap_after_model`) the assistant toolUse message is durable,
  and the tools then run: the write overlaps them, and the tool-result message write too.

A pending bookmark names only messages that were durable before it started, so a message
write never waits for it: whichever lands first, a stored bookmark counts only stored messages.
A crash with the newer message stored and the bookmark lost leaves the previous bookmark,
which the resume gate denies (its message count is behind), so the stored messages are used
as they are. (At after_tools that costs nothing: the next reply is a toolUse whose tool has
not run; on resume it is answered as interrupted, as after any crash before its after_model
bookmark. With the after_model bookmark in line, no tool starts before it is durable.)

Everything else waits: every boundary, and the end of the invocation, first calls
`settle()`, which waits for the pending write and re-raises its error there; so bookmarks
land in order (each replaces the previous one's version), and a failed one fails the
invocation at the next boundary, before any tool runs, instead of being lost.

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
