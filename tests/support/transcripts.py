"""The one transcript validator the tests share (design.md, "Messages").

A persisted or sent transcript must be a valid Converse conversation: it starts with a user
message, roles alternate, no message is empty, and every assistant `toolUse` is answered by a
`toolResult` with the same id, in the same order, in the next user message (and a user message
answers nothing else). The only exception is a trailing assistant `toolUse` that an active
`after_model` bookmark for exactly these messages says is still pending.

`transcript_problems` lists every breach (for harnesses that collect findings);
`assert_valid_transcript` fails the test on the first list that is not empty.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Message = Mapping[str, Any]


def tool_use_ids(message: Message) -> list[str]:
    """Ids of the `toolUse` blocks of `message`, in order."""
    return [b["toolUse"]["toolUseId"] for b in message.get("content") or [] if "toolUse" in b]


def tool_result_ids(message: Message) -> list[str]:
    """Ids of the `toolResult` blocks of `message`, in order."""
    return [b["toolResult"]["toolUseId"] for b in message.get("content") or [] if "toolResult" in b]


def pending_allowed(messages: Sequence[Message], bookmark: Mapping[str, Any] | None) -> bool:
    """Whether `bookmark` says the trailing toolUse of `messages` is pending (resume runs it)."""
    return (
        bookmark is not None
        and bookmark.get("position") == "after_model"
        and bookmark.get("execution_status") == "active"
        and bookmark.get("message_count") == len(messages)
    )


def _message_problems(i: int, message: Message, previous: Message | None) -> list[str]:
    expected = "user" if i % 2 == 0 else "assistant"
    role = message.get("role")
    problems = [] if role == expected else [f"message {i} has role {role!r}, expected {expected!r}"]
    if not message.get("content"):
        problems.append(f"message {i} has no content")
    if role == "assistant" and tool_result_ids(message):
        problems.append(f"assistant message {i} holds a toolResult")
    if role == "user":
        if tool_use_ids(message):
            problems.append(f"user message {i} holds a toolUse")
        asked = tool_use_ids(previous) if previous is not None else []
        answered = tool_result_ids(message)
        if answered != asked:
            problems.append(f"message {i} answers {answered} but message {i - 1} asked {asked}")
    return problems


def transcript_problems(
    messages: Sequence[Message], *, bookmark: Mapping[str, Any] | None = None
) -> list[str]:
    """Why `messages` is not a valid Converse conversation (an empty list: it is valid).

    `bookmark` is the stored `checkpoint.json` content, if any: an active `after_model`
    bookmark counting these messages allows the trailing toolUse to stay unanswered.
    """
    if not messages:
        return ["empty transcript"]
    problems: list[str] = []
    for i, message in enumerate(messages):
        problems += _message_problems(i, message, messages[i - 1] if i else None)
    trailing = tool_use_ids(messages[-1])
    if trailing and not pending_allowed(messages, bookmark):
        problems.append(f"trailing toolUse {trailing} is never answered")
    return problems


def assert_valid_transcript(
    messages: Sequence[Message], *, bookmark: Mapping[str, Any] | None = None
) -> None:
    """Fail the calling test with every breach of the Converse rules in `messages`."""
    problems = transcript_problems(messages, bookmark=bookmark)
    assert not problems, "invalid transcript:\n  " + "\n  ".join(problems)
