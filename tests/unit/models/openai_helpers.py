"""Shared setup of the OpenAIModel tests: a model on a mocked HTTP API, canned replies.

The `openai` SDK is in the dev extra: a plain import, so a missing SDK fails the suite.
"""

from __future__ import annotations

from typing import Any

import openai

from elsai.models.base import ModelRequest
from elsai.models.openai import OpenAIModel
from tests.unit.models.helpers import MockAPI, Reply, Sleeps

HELLO = ModelRequest(messages=[{"role": "user", "content": [{"text": "hello"}]}])


def make(*replies: Reply, **kwargs: Any) -> tuple[OpenAIModel, MockAPI, Sleeps]:
    api = MockAPI(openai, *replies)
    client = openai.AsyncOpenAI(api_key="test-key", http_client=api.http_client(), max_retries=0)
    model = OpenAIModel(client=client, **kwargs)
    sleeps = Sleeps()
    model.retry.sleep = sleeps
    return model, api, sleeps


def error(
    status: int, message: str, code: Any = None, kind: str = "invalid_request_error"
) -> Reply:
    return Reply.error(
        status, {"error": {"message": message, "type": kind, "param": None, "code": code}}
    )


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": choices,
        **extra,
    }
