"""AnthropicModel retries, error mapping and a full agent tool cycle, all over mocked HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from elsai import Agent, tool
from elsai.errors import ContextWindowOverflowError, ModelError, ModelThrottledError
from elsai.models.base import (
    TextDelta,
)
from tests.unit.models.anthropic_helpers import (
    HELLO,
    MESSAGE_START,
    OVERLOADED_EVENT,
    AnthropicModel,
    anthropic,
    error,
    make,
    short_stream,
)
from tests.unit.models.helpers import (
    MockAPI,
    Reply,
    Sleeps,
    anthropic_sse,
    assemble,
    collect,
    collect_until_error,
    fixture,
)


@pytest.mark.parametrize(
    "throttle",
    [
        error(
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
        ),
        error(529, "overloaded_error", "Overloaded"),
    ],
)
def test_throttling_is_retried_with_backoff_then_succeeds(throttle: Reply) -> None:
    model, api, sleeps = make(
        throttle, Reply.sse(fixture("anthropic_text.sse")), initial_backoff=2.0
    )
    events = collect(model, HELLO)
    assert assemble(events).message()["content"] == [
        {"text": "It is 22 degrees and sunny in Paris."}
    ]
    assert len(api.bodies) == 2 and api.bodies[0] == api.bodies[1]
    assert len(sleeps.calls) == 1 and 0.0 <= sleeps.calls[0] <= 2.0


def test_throttling_forever_raises_model_throttled_error() -> None:
    model, api, sleeps = make(
        error(429, "rate_limit_error", "slow down"),
        max_retries=3,
        initial_backoff=1.0,
        max_backoff=3.0,
    )
    seen, exc = collect_until_error(model, HELLO)
    assert seen == []
    assert isinstance(exc, ModelThrottledError)
    assert len(api.bodies) == 4
    caps = [1.0, 2.0, 3.0]  # full jitter under a doubling, capped ceiling
    assert len(sleeps.calls) == 3 and all(
        0.0 <= s <= cap for s, cap in zip(sleeps.calls, caps, strict=True)
    )


def test_prompt_too_long_is_a_context_window_overflow_and_not_retried() -> None:
    model, api, sleeps = make(
        error(400, "invalid_request_error", "prompt is too long: 215000 tokens > 200000 maximum")
    )
    _, exc = collect_until_error(model, HELLO)
    assert isinstance(exc, ContextWindowOverflowError)
    assert len(api.bodies) == 1 and sleeps.calls == []


def test_server_errors_are_retried_then_become_model_error() -> None:
    model, api, sleeps = make(error(500, "api_error", "Internal server error"), max_retries=2)
    _, exc = collect_until_error(model, HELLO)
    assert type(exc) is ModelError
    assert "Internal server error" in str(exc)
    assert len(api.bodies) == 3 and len(sleeps.calls) == 2


def test_other_client_errors_are_model_errors_without_retry() -> None:
    model, api, sleeps = make(
        error(400, "invalid_request_error", "tools.0.name: String should match pattern")
    )
    _, exc = collect_until_error(model, HELLO)
    assert type(exc) is ModelError
    assert len(api.bodies) == 1 and sleeps.calls == []


def test_overloaded_event_before_any_content_is_retried() -> None:
    model, api, sleeps = make(
        Reply.sse(anthropic_sse(MESSAGE_START) + OVERLOADED_EVENT),
        Reply.sse(short_stream("end_turn")),
    )
    events = collect(model, HELLO)
    assert assemble(events).message()["content"] == [{"text": "ok"}]
    assert len(api.bodies) == 2 and len(sleeps.calls) == 1


def test_overloaded_event_after_content_is_raised_not_retried() -> None:
    partial = anthropic_sse(
        MESSAGE_START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "Half an"},
        },
    )
    model, api, sleeps = make(Reply.sse(partial + OVERLOADED_EVENT))
    seen, exc = collect_until_error(model, HELLO)
    assert seen == [TextDelta("Half an", 0)]
    assert isinstance(exc, ModelThrottledError)
    assert len(api.bodies) == 1 and sleeps.calls == []


def test_a_stream_cut_before_message_stop_is_an_error() -> None:
    model, _, _ = make(Reply.sse(short_stream("end_turn").rsplit("event: message_stop", 1)[0]))
    _, exc = collect_until_error(model, HELLO)
    assert type(exc) is ModelError and "message_stop" in str(exc)


def test_own_client_has_sdk_retries_off_and_one_client_per_event_loop() -> None:
    api = MockAPI(
        anthropic,
        error(429, "rate_limit_error", "slow down"),
        Reply.sse(fixture("anthropic_text.sse")),
    )
    model = AnthropicModel(client_args={"api_key": "k", "http_client": api.http_client()})
    sleeps = Sleeps()
    model.retry.sleep = sleeps
    collect(model, HELLO)
    # One HTTP request per attempt of ours: the SDK did not retry the 429 on its own.
    assert len(api.bodies) == 2 and len(sleeps.calls) == 1

    async def client_in_new_loop() -> Any:
        return model.client

    first, second = asyncio.run(client_in_new_loop()), asyncio.run(client_in_new_loop())
    assert first is not second and first.max_retries == 0


def test_agent_completes_a_tool_cycle_over_mocked_http() -> None:
    calls: list[str] = []

    @tool
    def get_weather(city: str, unit: str = "celsius") -> str:
        """Current weather of a city."""
        calls.append(city)
        return f"22 degrees {unit} and sunny in {city}"

    model, api, _ = make(
        Reply.sse(fixture("anthropic_tool_use.sse")), Reply.sse(fixture("anthropic_text.sse"))
    )
    agent = Agent(model=model, tools=[get_weather], system_prompt="Be brief.")
    result = agent("How is the weather in Paris?")
    assert str(result).strip() == "It is 22 degrees and sunny in Paris."
    assert calls == ["Paris"]
    first, second = api.bodies
    assert first["system"] == "Be brief."
    assert first["tools"] == [
        {
            "name": "get_weather",
            "description": "Current weather of a city.",
            "input_schema": get_weather.spec["inputSchema"]["json"],
        }
    ]
    assert first["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "How is the weather in Paris?"}]}
    ]
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "I'll check the weather in Paris."},
                {
                    "type": "tool_use",
                    "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                    "name": "get_weather",
                    "input": {"city": "Paris", "unit": "celsius"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                    "content": [{"type": "text", "text": "22 degrees celsius and sunny in Paris"}],
                }
            ],
        },
    ]
