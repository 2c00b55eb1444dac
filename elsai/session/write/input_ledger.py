"""Exactly-once input, checked: a reused invocation_id must carry the input it recorded.

An invocation id the session already recorded is not appended again (a retry resumes
instead). If the caller reuses the id for a *different* prompt, that rule would silently
answer the old prompt (or, for an unfinished run, finish it while the new prompt, say a
"CANCEL", is dropped); the jobs API answers 409 for the same mismatch, and so does the SDK,
with `InvocationMismatchError`, finished or not. A retry must repeat its input (a Swarm or
Graph node builds the same input for the same invocation id).
"""

from __future__ import annotations

from collections.abc import Sequence

from elsai.errors import InvocationMismatchError
from elsai.types import ContentBlock, Message

MAX_TRACKED = 200


def _input_blocks(message: Message) -> list[ContentBlock]:
    """What callers contributed to a user message: everything but tool results."""
    return [b for b in message.get("content", []) if "toolResult" not in b]


def _contains_run(haystack: Sequence[ContentBlock], needle: Sequence[ContentBlock]) -> bool:
    size = len(needle)
    return any(
        list(haystack[i : i + size]) == list(needle) for i in range(len(haystack) - size + 1)
    )


class InputLedger:
    """Which stored message holds each known invocation's input (bounded, newest kept)."""

    def __init__(self) -> None:
        self._inputs: dict[str, list[ContentBlock]] = {}

    def remember(self, invocation_ids: Sequence[str], message: Message) -> None:
        """Note the user input a stored message recorded for its invocation ids."""
        if message.get("role") != "user":
            return
        for invocation_id in invocation_ids:
            self._inputs.pop(invocation_id, None)
            self._inputs[invocation_id] = _input_blocks(message)
        while len(self._inputs) > MAX_TRACKED:
            self._inputs.pop(next(iter(self._inputs)))

    def check(self, invocation_id: str, content: Sequence[ContentBlock], where: str) -> None:
        """Raise if `content` is not the input stored for `invocation_id`.

        Unknown ids (older than the loaded window) and empty input (a plain resume) pass.
        """
        stored = self._inputs.get(invocation_id)
        if stored is None or not content or any("interruptResponse" in b for b in content):
            return
        if _contains_run(stored, content):
            return
        raise InvocationMismatchError(
            f"invocation {invocation_id!r} was already recorded in {where} with a different "
            "prompt; its stored input wins, so this prompt would be ignored. Use a new "
            "invocation_id for new input, or repeat the original prompt to resume it."
        )
