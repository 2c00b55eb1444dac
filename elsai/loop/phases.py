"""Phases of the loop hand their result to the next phase as the last item they yield.

A phase is an async generator: it streams events to the caller and ends with one `Done`
carrying what the next phase needs. `Relay` passes the events on and keeps that value, so
no phase talks to another through attributes set on the side.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Generic, NamedTuple, TypeVar

from elsai.loop.events import StreamEvent

T = TypeVar("T")


class Done(NamedTuple, Generic[T]):
    """The last item of a phase: its result."""

    value: T


#: What a phase yields: stream events, then one `Done`.
Phase = AsyncIterator[StreamEvent | Done[T]]

_MISSING = object()


class Relay(Generic[T]):
    """Iterate to relay a phase's stream events; then `value` is the phase's result."""

    def __init__(self, phase: Phase[T]) -> None:
        self._phase = phase
        self._value: object = _MISSING

    async def __aiter__(self) -> AsyncIterator[StreamEvent]:
        async for item in self._phase:
            if isinstance(item, Done):
                self._value = item.value
            else:
                yield item

    @property
    def value(self) -> T:
        """The phase's result; a phase that ended without one is a bug in the loop."""
        if self._value is _MISSING:
            raise RuntimeError("a loop phase ended without its result")
        return self._value  # type: ignore[return-value]
