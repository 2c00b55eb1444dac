"""OpenAIModel against the openai SDK's own mock transport: exact bodies, recorded streams."""

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
from tests.unit.models.helpers import (
    MockAPI,
    Reply,
    assemble,
    collect,
    fixture,
    openai_sse,
)
from tests.unit.models.openai_helpers import HELLO, OpenAIModel, chunk, make, openai

PNG = b"\x89PNG\r\n\x1a\n-not-really-a-png"
PNG_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()
WEATHER: ToolSpec = {
    "name": "get_weather",
    "description": "Current weather of a city.",
    "inputSchema": {
        "json": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
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
            {"toolUse": {"toolUseId": "call_1", "name": "get_weather", "input": {"city": "Paris"}}},
            {"toolUse": {"toolUseId": "call_2", "name": "get_weather", "input": {"city": "Oslo"}}},
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": "call_1",
                    "status": "success",
                    "content": [{"json": {"temp_c": 22}}],
                }
            },
            {
                "toolResult": {
                    "toolUseId": "call_2",
                    "status": "error",
                    "content": [{"text": "Error: no station"}],
                }
            },
        ],
    },
    {
        "role": "assistant",
        "content": [
            {"reasoningContent": {"reasoningText": {"text": "Oslo failed."}}},
            {"text": "Paris: 22 degrees. Oslo: unknown."},
        ],
    },
    {"role": "user", "content": [{"text": "Thanks!"}]},
]


def test_request_body_maps_a_multi_turn_conversation_exactly() -> None:
    model, api, _ = make(Reply.sse(fixture("openai_text.sse")), params={"temperature": 0})
    before = copy.deepcopy(CONVERSATION)
    request = ModelRequest(
        messages=CONVERSATION,
        tool_specs=[WEATHER],
        system_prompt="You are terse.",
        tool_choice={"any": {}},
    )
    collect(model, request)
    assert before == CONVERSATION, "the provider must not mutate the conversation"
    assert api.requests[0].url.path == "/v1/chat/completions"
    assert api.bodies == [
        {
            "model": "gpt-4o",
            "stream": True,
            "stream_options": {"include_usage": True},
            "temperature": 0,
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "description": "Current weather of a city.",
                        "parameters": WEATHER["inputSchema"]["json"],
                    },
                }
            ],
            "tool_choice": "required",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "text",
                            "text": "What is in this picture, and how is the weather in Paris?",
                        },
                        {"type": "image_url", "image_url": {"url": PNG_URL}},
                    ],
                },
                {
                    "role": "assistant",
                    "content": "A cat. Let me check the weather.",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                        },
                        {
                            "id": "call_2",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                        },
                    ],
                },
                {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": 22}'},
                {"role": "tool", "tool_call_id": "call_2", "content": "Error: no station"},
                {"role": "assistant", "content": "Paris: 22 degrees. Oslo: unknown."},
                {"role": "user", "content": "Thanks!"},
            ],
        }
    ]


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ({"auto": {}}, "auto"),
        ({"any": {}}, "required"),
        (
            {"tool": {"name": "get_weather"}},
            {"type": "function", "function": {"name": "get_weather"}},
        ),
    ],
)
def test_tool_choice_mapping(choice: Any, expected: Any) -> None:
    model, _, _ = make(Reply.sse(""))
    body = model.build_request(
        ModelRequest(messages=HELLO.messages, tool_specs=[WEATHER], tool_choice=choice)
    )
    assert body["tool_choice"] == expected


def test_tool_result_images_follow_the_tool_message_as_user_content() -> None:
    model, _, _ = make(Reply.sse(""))
    messages: list[Any] = [  # Any: tool-result images are beyond elsai's TypedDicts
        {"role": "user", "content": [{"text": "plot it"}]},
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": "c1", "name": "plot", "input": {}}}],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "c1",
                        "status": "success",
                        "content": [
                            {"text": "chart attached"},
                            {"image": {"format": "png", "source": {"bytes": PNG}}},
                        ],
                    }
                }
            ],
        },
    ]
    assert model.build_request(ModelRequest(messages=messages))["messages"][1:] == [
        {
            "role": "assistant",
            "content": "",  # not None: llama.cpp's server rejects a null content (a 500)
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "plot", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "chart attached"},
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": PNG_URL}}]},
    ]


def test_stream_of_text_and_two_tool_calls_assembles_the_exact_message() -> None:
    model, _, _ = make(Reply.sse(fixture("openai_tool_calls.sse")))
    events = collect(model, HELLO)
    stop = events[-1]
    assert isinstance(stop, ModelStop) and stop.stop_reason == "tool_use"
    assert events[:-1] == [
        TextDelta("Checking", 1),
        TextDelta(" both cities.", 1),
        ToolUseStart(2, "call_Dn2RJJSxzDm49vlVTehseJ0k", "get_weather"),
        ToolInputDelta(2, '{"ci'),
        ToolInputDelta(2, 'ty": "Paris"}'),
        ToolUseStart(3, "call_7vFmQ2bcTkQeWbyOcW3sJ1uL", "get_weather"),
        ToolInputDelta(3, '{"city": "Os'),
        ToolInputDelta(3, 'lo"}'),
        BlockStop(1),
        BlockStop(2),
        BlockStop(3),
    ]
    assembled = assemble(events)
    assert assembled.message() == {
        "role": "assistant",
        "content": [
            {"text": "Checking both cities."},
            {
                "toolUse": {
                    "toolUseId": "call_Dn2RJJSxzDm49vlVTehseJ0k",
                    "name": "get_weather",
                    "input": {"city": "Paris"},
                }
            },
            {
                "toolUse": {
                    "toolUseId": "call_7vFmQ2bcTkQeWbyOcW3sJ1uL",
                    "name": "get_weather",
                    "input": {"city": "Oslo"},
                }
            },
        ],
    }
    assert assembled.stop_reason == "tool_use"
    assert assembled.usage == {
        "inputTokens": 120,
        "outputTokens": 45,
        "totalTokens": 165,
        "cacheReadInputTokens": 64,
    }


@pytest.mark.parametrize(
    ("finish", "expected"),
    [("stop", "end_turn"), ("length", "max_tokens"), ("content_filter", "content_filtered")],
)
def test_finish_reasons(finish: str, expected: str) -> None:
    usage = {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}
    stream = openai_sse(
        chunk({"role": "assistant", "content": "ok"}), chunk({}, finish), chunk(usage=usage)
    )
    model, _, _ = make(Reply.sse(stream))
    stop = collect(model, HELLO)[-1]
    assert isinstance(stop, ModelStop)
    assert stop.stop_reason == expected
    assert stop.usage == {"inputTokens": 7, "outputTokens": 2, "totalTokens": 9}


def test_compatible_server_quirks_are_tolerated() -> None:
    """Ollama-style: whole calls in one chunk, all at index 0, one without an id, "stop",
    and no usage chunk; vLLM-style `reasoning_content` becomes reasoning."""
    calls = [
        {
            "index": 0,
            "id": "call_a",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        },
        {
            "index": 0,
            "id": "call_b",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
        },
    ]
    stream = openai_sse(
        chunk({"role": "assistant", "content": None, "reasoning_content": "Two cities."}),
        chunk({"tool_calls": [calls[0]]}),
        chunk({"tool_calls": [calls[1]]}),
        chunk({"tool_calls": [{"index": 1, "function": {"name": "get_time", "arguments": "{}"}}]}),
        chunk({}, "stop"),
    )
    model, _, _ = make(Reply.sse(stream))
    events = collect(model, HELLO)
    assert events[0] == ReasoningDelta(0, "Two cities.")
    assembled = assemble(events)
    assert assembled.stop_reason == "tool_use"
    assert assembled.usage == {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}
    content = assembled.message()["content"]
    assert content[0] == {"reasoningContent": {"reasoningText": {"text": "Two cities."}}}
    uses = [b["toolUse"] for b in content[1:]]
    assert [(u["toolUseId"], u["input"]) for u in uses[:2]] == [
        ("call_a", {"city": "Paris"}),
        ("call_b", {"city": "Oslo"}),
    ]
    assert uses[2]["name"] == "get_time" and uses[2]["toolUseId"].startswith("call_")


def test_base_url_reaches_a_local_compatible_server() -> None:
    api = MockAPI(openai, Reply.sse(fixture("openai_text.sse")))
    model = OpenAIModel(
        "llama3.2",
        client_args={
            "base_url": "http://localhost:11434/v1",
            "api_key": "ollama",
            "http_client": api.http_client(),
        },
    )
    message = assemble(collect(model, HELLO)).message()
    assert message == {"role": "assistant", "content": [{"text": "Paris is 22 degrees and sunny."}]}
    assert str(api.requests[0].url) == "http://localhost:11434/v1/chat/completions"
    assert api.bodies[0]["model"] == "llama3.2"
    assert model.client.max_retries == 0  # we retry; the SDK does not stack its own retries


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # makes `import openai` fail
    with pytest.raises(ImportError) as info:
        OpenAIModel()
    assert str(info.value) == "OpenAIModel needs the 'openai' extra: pip install \"elsai[openai]\""
