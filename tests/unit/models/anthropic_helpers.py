"""Shared setup of the AnthropicModel tests: a model on a mocked HTTP API, canned replies.

The `anthropic` SDK is in the dev extra: a plain import, so a missing SDK fails the suite.
"""

from __future__ import annotations

from typing import Any

import anthropic

from elsai.models.anthropic import DEFAULT_MODEL_ID, AnthropicModel
from elsai.models.base import ModelRequest
from tests.unit.models.helpers import MockAPI, Reply, Sleeps, anthropic_sse

HELLO = ModelRequest(messages=[{"role": "user", "content": [{"text": "hello"}]}])


def make(*replies: Reply, **kwargs: Any) -> tuple[AnthropicModel, MockAPI, Sleeps]:
    api = MockAPI(anthropic, *replies)
    client = anthropic.AsyncAnthropic(
        api_key="test-key", http_client=api.http_client(), max_retries=0
    )
    model = AnthropicModel(client=client, **kwargs)
    sleeps = Sleeps()
    model.retry.sleep = sleeps
    return model, api, sleeps


def error(status: int, kind: str, message: str) -> Reply:
    return Reply.error(status, {"type": "error", "error": {"type": kind, "message": message}})


def short_stream(stop_reason: str) -> str:
    return anthropic_sse(
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": DEFAULT_MODEL_ID,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 5, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 3},
        },
        {"type": "message_stop"},
    )


MESSAGE_START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": DEFAULT_MODEL_ID,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 1},
    },
}
OVERLOADED_EVENT = (
    "event: error\ndata: "
    + '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'
)
