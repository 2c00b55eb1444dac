"""The shared transcript validator rejects each breach of the Converse rules it claims to check."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.transcripts import assert_valid_transcript, transcript_problems


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def use(tool_use_id: str) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": tool_use_id, "name": "t", "input": {}}}


def result(tool_use_id: str) -> dict[str, Any]:
    return {"toolResult": {"toolUseId": tool_use_id, "status": "success", "content": []}}


TEXT = {"text": "hi"}
PENDING = {"position": "after_model", "execution_status": "active", "message_count": 2}


def test_a_valid_conversation_passes() -> None:
    messages = [
        user(TEXT),
        assistant(use("a"), use("b")),
        user(result("a"), result("b")),
        assistant(TEXT),
    ]
    assert transcript_problems(messages) == []
    assert_valid_transcript(messages)


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ([], "empty transcript"),
        ([assistant(TEXT)], "message 0 has role 'assistant'"),
        ([user(TEXT), user(TEXT)], "message 1 has role 'user'"),
        ([user(TEXT), assistant()], "message 1 has no content"),
        ([user(result("x"))], "message 0 answers ['x']"),
        ([user(TEXT), assistant(result("x"))], "assistant message 1 holds a toolResult"),
        ([user(use("x"))], "user message 0 holds a toolUse"),
        ([user(TEXT), assistant(use("a")), user(TEXT)], "message 2 answers [] but"),
        ([user(TEXT), assistant(use("a"), use("b")), user(result("b"), result("a"))], "answers"),
        ([user(TEXT), assistant(use("a"))], "trailing toolUse ['a'] is never answered"),
    ],
)
def test_each_breach_is_reported(messages: list[dict[str, Any]], problem: str) -> None:
    assert any(problem in p for p in transcript_problems(messages)), transcript_problems(messages)
    with pytest.raises(AssertionError, match="invalid transcript"):
        assert_valid_transcript(messages)


def test_only_an_active_after_model_bookmark_for_these_messages_allows_a_pending_tool_use() -> None:
    messages = [user(TEXT), assistant(use("a"))]
    assert_valid_transcript(messages, bookmark=PENDING)
    for stale in (
        {**PENDING, "position": "after_tools"},
        {**PENDING, "execution_status": "completed"},
        {**PENDING, "message_count": 1},
    ):
        with pytest.raises(AssertionError, match="trailing toolUse"):
            assert_valid_transcript(messages, bookmark=stale)
