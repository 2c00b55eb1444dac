"""OpenAIModel retries, error mapping and a full agent tool cycle, all over mocked HTTP."""

from __future__ import annotations

import pytest

from elsai import Agent, tool
from elsai.errors import ContextWindowOverflowError, ModelError, ModelThrottledError
from elsai.models.base import (
    TextDelta,
)
from tests.unit.models.helpers import (
    Reply,
    assemble,
    collect,
    collect_until_error,
    fixture,
    openai_sse,
)
from tests.unit.models.openai_helpers import HELLO, chunk, error, make


def test_rate_limit_is_retried_with_backoff_then_succeeds() -> None:
    model, api, sleeps = make(
        error(429, "Rate limit reached for gpt-4o", "rate_limit_exceeded", "requests"),
        Reply.sse(fixture("openai_text.sse")),
        initial_backoff=2.0,
    )
    events = collect(model, HELLO)
    assert assemble(events).message()["content"] == [{"text": "Paris is 22 degrees and sunny."}]
    assert len(api.bodies) == 2 and api.bodies[0] == api.bodies[1]
    assert len(sleeps.calls) == 1 and 0.0 <= sleeps.calls[0] <= 2.0


def test_rate_limit_forever_raises_model_throttled_error() -> None:
    model, api, sleeps = make(
        error(429, "Rate limit reached", "rate_limit_exceeded", "requests"), max_retries=2
    )
    seen, exc = collect_until_error(model, HELLO)
    assert seen == [] and isinstance(exc, ModelThrottledError)
    assert len(api.bodies) == 3 and len(sleeps.calls) == 2


def test_exhausted_quota_is_not_retried() -> None:
    model, api, sleeps = make(
        error(429, "You exceeded your current quota", "insufficient_quota", "insufficient_quota")
    )
    _, exc = collect_until_error(model, HELLO)
    assert type(exc) is ModelError
    assert len(api.bodies) == 1 and sleeps.calls == []


@pytest.mark.parametrize(
    "reply",
    [
        error(
            400,
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.",
            "context_length_exceeded",
        ),
        # vLLM: no code, the message says it.
        Reply.error(
            400,
            {
                "object": "error",
                "message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            },
        ),
        # llama.cpp server.
        Reply.error(
            400,
            {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                }
            },
        ),
    ],
)
def test_context_length_exceeded_is_an_overflow(reply: Reply) -> None:
    model, api, sleeps = make(reply)
    _, exc = collect_until_error(model, HELLO)
    assert isinstance(exc, ContextWindowOverflowError)
    assert len(api.bodies) == 1 and sleeps.calls == []


def test_server_errors_are_retried_then_become_model_error() -> None:
    model, api, sleeps = make(
        error(500, "The server had an error", None, "server_error"), max_retries=1
    )
    _, exc = collect_until_error(model, HELLO)
    assert type(exc) is ModelError and "server had an error" in str(exc)
    assert len(api.bodies) == 2 and len(sleeps.calls) == 1


def test_error_after_content_is_raised_not_retried() -> None:
    stream = openai_sse(chunk({"role": "assistant", "content": "Half"})).replace(
        "data: [DONE]\n\n", ""
    )
    stream += 'data: {"error": {"message": "The server had an error", "type": "server_error"}}\n\n'
    model, api, sleeps = make(Reply.sse(stream))
    seen, exc = collect_until_error(model, HELLO)
    assert seen == [TextDelta("Half", 1)]
    assert type(exc) is ModelError
    assert len(api.bodies) == 1 and sleeps.calls == []


def test_agent_completes_a_tool_cycle_over_mocked_http() -> None:
    calls: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """Current weather of a city."""
        calls.append(city)
        return f"{city}: 22 degrees"

    model, api, _ = make(
        Reply.sse(fixture("openai_tool_calls.sse")), Reply.sse(fixture("openai_text.sse"))
    )
    agent = Agent(model=model, tools=[get_weather], system_prompt="Be brief.")
    result = agent("Weather in Paris and Oslo?")
    assert str(result).strip() == "Paris is 22 degrees and sunny."
    assert sorted(calls) == ["Oslo", "Paris"]
    first, second = api.bodies
    assert first["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris and Oslo?"},
    ]
    assert first["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather of a city.",
                "parameters": get_weather.spec["inputSchema"]["json"],
            },
        }
    ]
    assert second["messages"][2:] == [
        {
            "role": "assistant",
            "content": "Checking both cities.",
            "tool_calls": [
                {
                    "id": "call_Dn2RJJSxzDm49vlVTehseJ0k",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                },
                {
                    "id": "call_7vFmQ2bcTkQeWbyOcW3sJ1uL",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                },
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_Dn2RJJSxzDm49vlVTehseJ0k",
            "content": "Paris: 22 degrees",
        },
        {
            "role": "tool",
            "tool_call_id": "call_7vFmQ2bcTkQeWbyOcW3sJ1uL",
            "content": "Oslo: 22 degrees",
        },
    ]
