"""Reading what a local job left behind: prompts in the stored transcript, the task events."""

from __future__ import annotations

from typing import Any

from elsai.types import Message, text_of
from tests.support.transcripts import assert_valid_transcript as assert_valid_conversation  # noqa: F401


def prompt_count(messages: list[Message], prompt: str) -> int:
    return len([m for m in messages if m["role"] == "user" and prompt in text_of(m)])


def run_slice_events(history: list[dict[str, Any]]) -> list[str]:
    """Task event types of the execution, in order (TaskScheduled/TaskFailed/TaskSucceeded/...)."""
    return [e["type"] for e in history if e["type"].startswith("Task") and "State" not in e["type"]]
