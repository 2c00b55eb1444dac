"""AnthropicModel against the anthropic SDK's own mock transport: exact bodies, recorded streams."""

from __future__ import annotations

import base64
import copy
import sys
from typing import Any

import pytest

from elsai.models.base import (
    BlockStop,
    ModelRequest,
    ModelStop,
    ReasoningDelta,
    TextDelta,
    ToolInputDelta,
    ToolUseStart,
)
from elsai.types import Message, ToolSpec
from tests.unit.models.anthropic_helpers import (
    HELLO,
    AnthropicModel,
    make,
    short_stream,
)
from tests.unit.models.helpers import (
    Reply,
    assemble,
    collect,
    fixture,
)

PNG = b"\x89PNG\r\n\x1a\n-not-really-a-png"
WEATHER: ToolSpec = {
    "name": "get_weather",
    "description": "Current weather of a city.",
    "inputSchema": {
        "json": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    },
}
FORECAST: ToolSpec = {
    "name": "get_forecast",
    "description": "Forecast for the next days.",
    "inputSchema": {
        "json": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        }
    },
}
CONVERSATION: list[Message] = [
    {
        "role": "user",
        "content": [
            {"text": "What is in this picture, and how is the weather in Paris?"},
            {"image": {"format": "png", "source": {"bytes": PNG}}},
        ],
    },
    {
        "role": "assistant",
        "content": [
            {"text": "A cat. Let me check the weather."},
            {
                "toolUse": {
                    "toolUseId": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                }
            },
            {
                "toolUse": {
                    "toolUseId": "toolu_2",
                    "name": "get_forecast",
                    "input": {"city": "Paris", "days": 3},
                }
            },
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": "toolu_1",
                    "status": "success",
                    "content": [{"json": {"temp_c": 22, "sky": "sunny"}}],
                }
            },
            {
                "toolResult": {
                    "toolUseId": "toolu_2",
                    "status": "error",
                    "content": [{"text": "Error: forecast service down"}],
                }
            },
        ],
    },
    {
        "role": "assistant",
        "content": [
            {
                "reasoningContent": {
                    "reasoningText": {"text": "The forecast failed.", "signature": "sig-1"}
                }
            },
            {"text": "It is 22 degrees and sunny; I could not get the forecast."},
        ],
    },
    {"role": "user", "content": [{"text": "Thanks!"}]},
]


def test_request_body_maps_a_multi_turn_conversation_exactly() -> None:
    model, api, _ = make(Reply.sse(fixture("anthropic_text.sse")), temperature=0.2)
    before = copy.deepcopy(CONVERSATION)
    request = ModelRequest(
        messages=CONVERSATION,
        tool_specs=[WEATHER, FORECAST],
        system_prompt="You are terse.",
        tool_choice={"any": {}},
    )
    collect(model, request)
    assert before == CONVERSATION, "the provider must not mutate the conversation"
    assert api.requests[0].url.path == "/v1/messages"
    assert api.bodies == [
        {
            "model": "claude-sonnet-4-6",
            "max_tokens": 4096,
            "temperature": 0.2,
            "stream": True,
            "system": "You are terse.",
            "tools": [
                {
                    "name": "get_weather",
                    "description": "Current weather of a city.",
                    "input_schema": WEATHER["inputSchema"]["json"],
                },
                {
                    "name": "get_forecast",
                    "description": "Forecast for the next days.",
                    "input_schema": FORECAST["inputSchema"]["json"],
                },
            ],
            "tool_choice": {"type": "any"},
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "text",
                            "text": "What is in this picture, and how is the weather in Paris?",
                        },
                        {
                            "type": "image",
                            "source": {
                                "type": "base64",
                                "media_type": "image/png",
                                "data": base64.b64encode(PNG).decode(),
                            },
                        },
                    ],
                },
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "A cat. Let me check the weather."},
                        {
                            "type": "tool_use",
                            "id": "toolu_1",
                            "name": "get_weather",
                            "input": {"city": "Paris"},
                        },
                        {
                            "type": "tool_use",
                            "id": "toolu_2",
                            "name": "get_forecast",
                            "input": {"city": "Paris", "days": 3},
                        },
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_1",
                            "content": [{"type": "text", "text": '{"temp_c": 22, "sky": "sunny"}'}],
                        },
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_2",
                            "content": [{"type": "text", "text": "Error: forecast service down"}],
                            "is_error": True,
                        },
                    ],
                },
                {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "thinking",
                            "thinking": "The forecast failed.",
                            "signature": "sig-1",
                        },
                        {
                            "type": "text",
                            "text": "It is 22 degrees and sunny; I could not get the forecast.",
                        },
                    ],
                },
                {"role": "user", "content": [{"type": "text", "text": "Thanks!"}]},
            ],
        }
    ]


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ({"auto": {}}, {"type": "auto"}),
        ({"any": {}}, {"type": "any"}),
        ({"tool": {"name": "get_weather"}}, {"type": "tool", "name": "get_weather"}),
    ],
)
def test_tool_choice_mapping(choice: Any, expected: dict[str, Any]) -> None:
    model, _, _ = make(Reply.sse(""))
    body = model.build_request(
        ModelRequest(messages=HELLO.messages, tool_specs=[WEATHER], tool_choice=choice)
    )
    assert body["tool_choice"] == expected


def test_params_are_merged_last_and_unsupported_blocks_are_dropped() -> None:
    model, _, _ = make(
        Reply.sse(""),
        params={"thinking": {"type": "enabled", "budget_tokens": 2048}, "max_tokens": 9000},
    )
    messages: list[Any] = [  # Any: cachePoint is beyond elsai's TypedDicts
        {
            "role": "user",
            "content": [{"text": "  "}, {"text": "hi"}, {"cachePoint": {"type": "default"}}],
        },
        # Reasoning without a signature cannot be replayed to Anthropic; it is left out.
        {
            "role": "assistant",
            "content": [{"reasoningContent": {"reasoningText": {"text": "hmm"}}}, {"text": "yo"}],
        },
    ]
    body = model.build_request(ModelRequest(messages=messages))
    assert body["max_tokens"] == 9000
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert "tools" not in body and "tool_choice" not in body and "system" not in body
    assert body["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "yo"}]},
    ]


def test_stream_of_text_and_a_tool_call_assembles_the_exact_message() -> None:
    model, _, _ = make(Reply.sse(fixture("anthropic_tool_use.sse")))
    events = collect(model, HELLO)
    stop = events[-1]
    assert isinstance(stop, ModelStop) and stop.latency_ms >= 0
    assert events[:-1] == [
        TextDelta("I'll check", 0),
        TextDelta(" the weather", 0),
        TextDelta(" in Paris.", 0),
        BlockStop(0),
        ToolUseStart(1, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather"),
        ToolInputDelta(1, ""),
        ToolInputDelta(1, '{"city": "Par'),
        ToolInputDelta(1, 'is", "unit": "cel'),
        ToolInputDelta(1, 'sius"}'),
        BlockStop(1),
    ]
    assembled = assemble(events)
    assert assembled.message() == {
        "role": "assistant",
        "content": [
            {"text": "I'll check the weather in Paris."},
            {
                "toolUse": {
                    "toolUseId": "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
                    "name": "get_weather",
                    "input": {"city": "Paris", "unit": "celsius"},
                }
            },
        ],
    }
    assert assembled.stop_reason == "tool_use"
    assert assembled.usage == {
        "inputTokens": 472,
        "outputTokens": 89,
        "totalTokens": 472 + 89 + 1024,
        "cacheReadInputTokens": 1024,
    }


def test_thinking_streams_as_reasoning_and_replays_with_its_signature() -> None:
    model, _, _ = make(Reply.sse(fixture("anthropic_thinking.sse")))
    events = collect(model, HELLO)
    assert (
        ReasoningDelta(0, signature="EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds")
        in events
    )
    message = assemble(events).message()
    assert message == {
        "role": "assistant",
        "content": [
            {
                "reasoningContent": {
                    "reasoningText": {
                        "text": "27 * 453: 27 * 400 = 10800, 27 * 53 = 1431, sum 12231.",
                        "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
                    }
                }
            },
            {"text": "27 * 453 = 12231"},
        ],
    }
    replay = model.build_request(ModelRequest(messages=[*HELLO.messages, message]))
    assert replay["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "27 * 453: 27 * 400 = 10800, 27 * 53 = 1431, sum 12231.",
        "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
    }


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("end_turn", "end_turn"),
        ("tool_use", "tool_use"),
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "stop_sequence"),
        ("refusal", "content_filtered"),
        ("model_context_window_exceeded", "max_tokens"),
    ],
)
def test_stop_reasons(raw: str, expected: str) -> None:
    model, _, _ = make(Reply.sse(short_stream(raw)))
    stop = collect(model, HELLO)[-1]
    assert isinstance(stop, ModelStop)
    assert stop.stop_reason == expected
    assert stop.usage == {"inputTokens": 5, "outputTokens": 3, "totalTokens": 8}


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # makes `import anthropic` fail
    with pytest.raises(ImportError) as info:
        AnthropicModel()
    assert (
        str(info.value)
        == "AnthropicModel needs the 'anthropic' extra: pip install \"elsai[anthropic]\""
    )
