"""Hook registry: callbacks keyed by event type, plus the HookProvider protocol."""

from __future__ import annotations

import inspect
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar, runtime_checkable

from elsai.hooks.events import HookEvent

E = TypeVar("E", bound=HookEvent)
Callback = Callable[[E], None | Awaitable[None]]


@runtime_checkable
class HookProvider(Protocol):
    """Bundles related callbacks; `register_hooks` adds them to a registry."""

    def register_hooks(self, registry: HookRegistry) -> None:
        """Add this provider's callbacks to `registry`."""


class HookRegistry:
    """Callbacks by event type; the loop fires events through `invoke`."""

    def __init__(self) -> None:
        self._callbacks: dict[type[HookEvent], list[Callable[[Any], Any]]] = defaultdict(list)

    def add_callback(self, event_type: type[E], callback: Callable[[E], Any]) -> None:
        """Call `callback` for every `event_type` event (and its subclasses)."""
        if not (isinstance(event_type, type) and issubclass(event_type, HookEvent)):
            raise TypeError(f"event_type must be a HookEvent subclass, got {event_type!r}")
        self._callbacks[event_type].append(callback)

    def add_hook(self, provider: HookProvider) -> None:
        """Let `provider` register its callbacks."""
        if not isinstance(provider, HookProvider):
            raise TypeError(f"{provider!r} does not implement register_hooks(registry)")
        provider.register_hooks(self)

    def callbacks_for(self, event: HookEvent) -> list[Callable[[Any], Any]]:
        """Callbacks for `event` in the order they run."""
        found = [
            cb for t in type(event).__mro__ if t in self._callbacks for cb in self._callbacks[t]
        ]
        return list(reversed(found)) if event.reverse_order else found

    async def invoke(self, event: E) -> E:
        """Run callbacks in order (reverse for after-events); async callbacks are awaited."""
        for callback in self.callbacks_for(event):
            outcome = callback(event)
            if inspect.isawaitable(outcome):
                await outcome
        return event
