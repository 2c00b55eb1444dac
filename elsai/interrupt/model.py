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
    """One ask of a person; `id` names exactly that ask.

    The id is derived from the tool call, the name, the ask's ordinal within the call (the
    first, second, ... `interrupt()` the call makes) and a digest of the reason, so a tool
    that asks once per item gets one interrupt per item, each answered on its own, and a
    re-run of the same call (after the answer, or after a crash) asks the same ids again.
    """

    id: str
    name: str
    reason: Any = None
    tool_use_id: str | None = None

    @classmethod
    def for_tool(
        cls, tool_use_id: str, name: str, reason: Any, source: str = "tool", ordinal: int = 0
    ) -> Interrupt:
        """Ask number `ordinal` (from 0) of tool call `tool_use_id`.

        The reason must be JSON-serialisable, and the same when the call runs again: an
        answer is returned only to the ask (same call, ordinal, name and reason) it was
        given for.
        """
        try:
            canonical = json.dumps(reason, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            raise TypeError(f"interrupt reason must be JSON-serialisable: {exc}") from exc
        reason_digest = hashlib.sha256(canonical.encode()).hexdigest()
        raw = f"{source}\x1f{tool_use_id}\x1f{name}\x1f{ordinal}\x1f{reason_digest}"
        digest = hashlib.sha256(raw.encode()).hexdigest()[:24]
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
