"""AgentState: a small JSON key-value store persisted with the agent (agent.json).

It sits at the bottom so tools and sessions can type against it without importing the agent.
"""

from __future__ import annotations

import copy
import json
from typing import Any


class AgentState:
    """Values must be JSON-serialisable so they survive a process restart unchanged."""

    def __init__(self, initial: dict[str, Any] | None = None) -> None:
        self._data: dict[str, Any] = {}
        for key, value in (initial or {}).items():
            self.set(key, value)

    def set(self, key: str, value: Any) -> None:
        """Store a deep copy of `value`; it must survive a JSON round trip."""
        if not isinstance(key, str) or not key:
            raise ValueError("state keys must be non-empty strings")
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"state value for {key!r} is not JSON-serialisable: {exc}") from exc
        self._data[key] = copy.deepcopy(value)

    def get(self, key: str | None = None, default: Any = None) -> Any:
        """A deep copy of one value, or of everything when `key` is None."""
        if key is None:
            return copy.deepcopy(self._data)
        return copy.deepcopy(self._data.get(key, default))

    def delete(self, key: str) -> None:
        """Forget `key` (missing keys are fine)."""
        self._data.pop(key, None)

    def to_dict(self) -> dict[str, Any]:
        """A deep copy of all values (what agent.json stores)."""
        return copy.deepcopy(self._data)

    def replace_all(self, data: dict[str, Any]) -> None:
        """Replace everything (a session restore)."""
        self._data = copy.deepcopy(data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __repr__(self) -> str:
        return f"AgentState({self._data!r})"
