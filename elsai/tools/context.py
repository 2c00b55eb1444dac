"""ToolContext: what a tool may ask about the call it is serving."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from elsai.types import AgentView, ToolUse


@dataclass
class ToolContext:
    """Injected into tools that declare a parameter annotated `ToolContext`."""

    tool_use: ToolUse
    agent: AgentView
    invocation_state: dict[str, Any] = field(default_factory=dict)
    #: How many times this call asked so far: each ask is its own interrupt.
    _asks: int = field(default=0, init=False, repr=False)

    @property
    def tool_use_id(self) -> str:
        """The id of the call being served (stable across crash re-runs)."""
        return self.tool_use["toolUseId"]

    def interrupt(self, name: str, reason: Any = None) -> Any:
        """Ask a human for input.

        Returns their response if the agent was resumed with one; otherwise pauses this tool
        (the invocation stops with stop_reason "interrupt"). Each call of `interrupt` is its own
        ask (one per item of a loop, say), answered on its own; `reason` must be the same when
        the tool runs again, since the answer belongs to the ask it was given for.
        """
        from elsai.interrupt.model import Interrupt

        ordinal, self._asks = self._asks, self._asks + 1
        return self.agent.interrupts.raise_or_answer(
            Interrupt.for_tool(self.tool_use_id, name, reason, ordinal=ordinal)
        )

    @property
    def idempotency_key(self) -> str:
        """Stable across crash re-runs of the same pending tool call.

        Derived from session id, agent id and toolUseId, which are all persisted before the
        tool starts; a tool re-run after a crash sees the same key and can dedupe side effects.
        """
        session_id = self.agent.session_id or ""
        raw = f"{session_id}\x1f{self.agent.agent_id}\x1f{self.tool_use_id}"
        return hashlib.sha256(raw.encode()).hexdigest()[:32]
