"""Small shared helpers for the agent-core tests (imported as a plain module)."""

from __future__ import annotations

from typing import Any

from elsai.types import Message


def tool_use(use_id: str, name: str, inp: dict[str, Any] | Any) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": use_id, "name": name, "input": inp}}


def assistant(*blocks: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    content = ([{"text": text}] if text is not None else []) + list(blocks)
    return {"role": "assistant", "content": content}


def results_of(message: Message) -> list[dict[str, Any]]:
    return [b["toolResult"] for b in message["content"] if "toolResult" in b]


def uses_of(message: Message) -> list[dict[str, Any]]:
    return [b["toolUse"] for b in message["content"] if "toolUse" in b]


def assert_valid_transcript(messages: list[Message], *, allow_pending: bool = False) -> None:
    """A valid Converse conversation: starts with user, roles alternate, every toolUse is
    answered (by id, in order) in the next user message and no toolResult is unanswered."""
    assert messages, "empty transcript"
    assert messages[0]["role"] == "user", messages[0]
    assert not results_of(messages[0]), (
        f"first message answers a toolUse that is gone: {messages[0]}"
    )
    for i, message in enumerate(messages):
        expected = "user" if i % 2 == 0 else "assistant"
        assert message["role"] == expected, (
            f"message {i} has role {message['role']}, expected {expected}"
        )
        assert message["content"], f"message {i} has no content"
        if message["role"] == "assistant":
            uses = uses_of(message)
            if uses and i + 1 == len(messages):
                assert allow_pending, f"trailing toolUse {uses} is never answered"
            elif uses:
                answered = [r["toolUseId"] for r in results_of(messages[i + 1])]
                assert answered == [u["toolUseId"] for u in uses], (i, uses, answered)
        elif i > 0:
            asked = [u["toolUseId"] for u in uses_of(messages[i - 1])]
            answered = [r["toolUseId"] for r in results_of(message)]
            assert answered == asked, f"message {i} answers {answered}, previous asked {asked}"


def last_request_results(model: Any) -> list[dict[str, Any]]:
    """toolResults in the last user message of the most recent recorded request."""
    return results_of(model.requests[-1].messages[-1])


def text_of_result(result: dict[str, Any]) -> str:
    return " ".join(str(c.get("text", c.get("json", ""))) for c in result["content"])
