"""Interrupt: a human-in-the-loop pause raised by a tool or a before-tool hook."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from elsai.errors import ElsaiError


class InterruptError(ElsaiError):
    """The invocation does not fit the agent's interrupt state (e.g. unanswered interrupts)."""


@dataclass(frozen=True)
class Interrupt:
    """`id` is stable: the same tool call raising the same name again gets the same id."""

    id: str
    name: str
    reason: Any = None
    tool_use_id: str | None = None

    @classmethod
    def for_tool(cls, tool_use_id: str, name: str, reason: Any, source: str = "tool") -> Interrupt:
        """An interrupt raised by tool call `tool_use_id`; the reason must be JSON-serialisable."""
        try:
            json.dumps(reason)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"interrupt reason must be JSON-serialisable: {exc}") from exc
        digest = hashlib.sha256(f"{source}\x1f{tool_use_id}\x1f{name}".encode()).hexdigest()[:24]
        return cls(id=f"interrupt-{digest}", name=name, reason=reason, tool_use_id=tool_use_id)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy (persisted in agent.json, returned by the API)."""
        return {
            "id": self.id,
            "name": self.name,
            "reason": self.reason,
            "tool_use_id": self.tool_use_id,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Interrupt:
        """The inverse of `to_dict`."""
        return cls(
            id=data["id"],
            name=data["name"],
            reason=data.get("reason"),
            tool_use_id=data.get("tool_use_id"),
        )


def interrupt_dict(interrupt: Any) -> dict[str, Any]:
    """A JSON-ready view of an interrupt object (anything with to_dict, a dict, or attributes)."""
    if isinstance(interrupt, dict):
        return dict(interrupt)
    to_dict = getattr(interrupt, "to_dict", None)
    if callable(to_dict):
        data = to_dict()
        if isinstance(data, dict):
            return data
    return {k: getattr(interrupt, k, None) for k in ("id", "name", "reason")}


class InterruptSignal(BaseException):
    """Unwinds a tool that asked for human input.

    A BaseException so that tools' own `except Exception` blocks do not swallow it.
    """

    def __init__(self, interrupt: Interrupt) -> None:
        super().__init__(f"interrupt {interrupt.name!r} ({interrupt.id})")
        self.interrupt = interrupt
