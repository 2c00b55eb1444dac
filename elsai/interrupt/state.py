"""InterruptState: pending interrupts, their answers, and results of tools that finished.

Persisted in agent.json, so a rebuilt agent (new process, same ids) can be resumed with
responses days later.
"""

from __future__ import annotations

from typing import Any

from elsai.interrupt.limits import check_payload
from elsai.interrupt.model import Interrupt, InterruptError, InterruptSignal
from elsai.types import ContentBlock, Message, ToolResult


class InterruptState:
    """The agent's interrupt bookkeeping; tools and hooks see it as `agent.interrupts`."""

    def __init__(self) -> None:
        self.pending: dict[str, Interrupt] = {}
        self.responses: dict[str, Any] = {}
        #: Results of tools in the interrupted batch that completed (not re-run on resume).
        self.completed: dict[str, ToolResult] = {}
        #: Set by a runtime that carries pending interrupts in a small place (None: no cap);
        #: `pause` refuses larger ones before anything changes (elsai.interrupt.limits).
        self.max_pending_bytes: int | None = None
        #: Interrupts found already answered on load (see `settle_if_answered`).
        self.settled: set[str] = set()

    @property
    def active(self) -> bool:
        """True while interrupts wait for responses (the next invocation must answer them)."""
        return bool(self.pending)

    def raise_or_answer(self, interrupt: Interrupt) -> Any:
        """The response for `interrupt` if one was given; otherwise pause the tool."""
        if interrupt.id in self.responses:
            return self.responses[interrupt.id]
        raise InterruptSignal(interrupt)

    def accept_responses(self, content: list[ContentBlock]) -> None:
        """Take `interruptResponse` blocks; anything else while interrupts are pending is an error."""
        answers: dict[str, Any] = {}
        for block in content:
            response = block.get("interruptResponse")
            if not isinstance(response, dict) or "interruptId" not in response:
                raise InterruptError(
                    "this agent is waiting for interrupt responses; invoke it with "
                    '[{"interruptResponse": {"interruptId": ..., "response": ...}}] for each of: '
                    + ", ".join(f"{i.id} ({i.name})" for i in self.pending.values())
                )
            answers[response["interruptId"]] = response.get("response")
        unknown = set(answers) - set(self.pending)
        if unknown:
            raise InterruptError(f"unknown interrupt id(s): {', '.join(sorted(unknown))}")
        missing = set(self.pending) - set(answers)
        if missing:
            raise InterruptError(
                "all pending interrupts must be answered together; missing: "
                + ", ".join(
                    f"{self.pending[i].id} ({self.pending[i].name})" for i in sorted(missing)
                )
            )
        self.responses.update(answers)

    def pause(self, completed: list[ToolResult], raised: list[Interrupt]) -> None:
        """A batch stopped for human input: keep what finished, wait for `raised`.

        The answers given so far stay until the batch finishes: a tool that asks once per
        item re-runs from its first ask, and each earlier ask must get its own answer again
        (never another ask's), while the new asks wait.
        Interrupts over `max_pending_bytes` raise InterruptPayloadTooLargeError first, with
        nothing changed: the agent is not left waiting for them.
        """
        if self.max_pending_bytes is not None:
            check_payload([i.to_dict() for i in raised], self.max_pending_bytes)
        self.completed.update({r["toolUseId"]: r for r in completed})
        self.pending = {i.id: i for i in raised}

    def settle_if_answered(self, last: Message | None) -> bool:
        """Forget pending interrupts whose batch's results are already stored (True if so).

        A process that died after storing the answered batch's results but before agent.json
        caught up leaves interrupts that are no longer pending; a retry must go on from the
        stored results instead of running the batch again. Their ids stay in `settled`, so
        the retry's repeated answers are recognised.
        """
        if not self.pending or last is None or last.get("role") != "user":
            return False
        answered = {
            block["toolResult"].get("toolUseId")
            for block in last.get("content", [])
            if isinstance(block, dict) and isinstance(block.get("toolResult"), dict)
        }
        if not all(i.tool_use_id in answered for i in self.pending.values()):
            return False
        settled = set(self.pending)
        self.clear()
        self.settled = settled
        return True

    def repeated_answers(self, content: list[ContentBlock]) -> bool:
        """True if `content` only answers interrupts that were settled on load (a retry)."""
        responses = [b.get("interruptResponse") for b in content if "interruptResponse" in b]
        ids = [r.get("interruptId") if isinstance(r, dict) else None for r in responses]
        return bool(ids) and all(i in self.settled for i in ids)

    def clear(self) -> None:
        """Forget everything (the interrupted batch finished)."""
        self.pending.clear()
        self.responses.clear()
        self.completed.clear()

    def to_dict(self) -> dict[str, Any]:
        """What agent.json stores ({} when nothing is pending)."""
        if not self.pending and not self.responses:
            return {}
        return {
            "pending": [i.to_dict() for i in self.pending.values()],
            "responses": dict(self.responses),
            "completed": dict(self.completed),
        }

    def restore(self, data: dict[str, Any] | None) -> None:
        """Load what `to_dict` stored (a rebuilt agent continues where it paused)."""
        self.clear()
        data = data or {}
        for item in data.get("pending", []):
            interrupt = Interrupt.from_dict(item)
            self.pending[interrupt.id] = interrupt
        self.responses.update(data.get("responses", {}))
        self.completed.update(data.get("completed", {}))


__all__ = ["InterruptState", "InterruptError"]
