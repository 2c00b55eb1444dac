"""BedrockModel against a stubbed bedrock-runtime client: no network, no real AWS."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import EventStreamError, ReadTimeoutError
from botocore.stub import Stubber
from botocore.validate import validate_parameters

import elsai.models.bedrock as bedrock_module
from elsai.errors import ContextWindowOverflowError, ModelError, ModelThrottledError
from elsai.models.base import (
    BlockStop,
    ModelEvent,
    ModelRequest,
    ModelStop,
    ReasoningDelta,
    TextDelta,
    ToolInputDelta,
    ToolUseStart,
)
from elsai.models.bedrock import DEFAULT_MODEL_ID, DEFAULT_REGION, BedrockModel
from elsai.models.stream import MessageAssembler
from elsai.types import Message

MODEL = "us.anthropic.claude-sonnet-4-6"
USER: Message = {"role": "user", "content": [{"text": "hello"}]}
BASIC = {"modelId": MODEL, "messages": [USER]}


class StreamStubber(Stubber):
    """Stubber whose converse_stream responses may carry `stream` as a list of event dicts.

    botocore validates `stream` as a single dict; here each listed event is validated against
    the event-stream shape instead, and any other iterable (used to inject stream errors) is
    passed through unvalidated.
    """

    def _validate_operation_response(self, operation_name: str, service_response: Any) -> None:
        if operation_name != "ConverseStream":
            super()._validate_operation_response(operation_name, service_response)  # type: ignore[misc]
            return
        output = self.client.meta.service_model.operation_model(operation_name).output_shape
        assert output is not None
        stream = service_response.get("stream")
        if isinstance(stream, list):
            for event in stream:
                validate_parameters(event, output.members["stream"])


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.calls.append(delay)


class FailingStream:
    """Yields `events`, then raises `error` (as a real EventStream does for error events)."""

    def __init__(self, events: Iterable[dict[str, Any]], error: Exception) -> None:
        self._events = list(events)
        self._error = error
        self.closed = False

    def __iter__(self) -> Iterator[dict[str, Any]]:
        yield from self._events
        raise self._error

    def close(self) -> None:
        self.closed = True


def make_model(**kwargs: Any) -> tuple[BedrockModel, StreamStubber, Sleeps]:
    session = boto3.Session(
        aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-west-2"
    )
    model = BedrockModel(MODEL, boto_session=session, **kwargs)
    stubber = StreamStubber(model.client)
    stubber.activate()
    sleeps = Sleeps()
    model._sleep = sleeps
    return model, stubber, sleeps


def collect(model: BedrockModel, request: ModelRequest) -> list[ModelEvent]:
    async def run() -> list[ModelEvent]:
        return [event async for event in model.stream(request)]

    return asyncio.run(run())


def assemble(events: list[ModelEvent]) -> MessageAssembler:
    assembler = MessageAssembler()
    for event in events:
        assembler.feed(event)
    return assembler


def text_stream(text: str = "Hi there", stop: str = "end_turn") -> list[dict[str, Any]]:
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": text}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": stop}},
        {
            "metadata": {
                "usage": {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7},
                "metrics": {"latencyMs": 42},
            }
        },
    ]


def client_error(stubber: Stubber, code: str, message: str, status: int = 400) -> None:
    stubber.add_client_error(
        "converse_stream",
        service_error_code=code,
        service_message=message,
        http_status_code=status,
        expected_params=BASIC,
    )


# --- defaults and construction ------------------------------------------------------------


def test_defaults() -> None:
    assert DEFAULT_MODEL_ID == "us.anthropic.claude-sonnet-4-6"
    assert DEFAULT_REGION == "us-west-2"


def test_region_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_REGION", raising=False)
    assert BedrockModel().region_name == "us-west-2"
    assert BedrockModel().model_id == DEFAULT_MODEL_ID
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    assert BedrockModel().region_name == "us-east-1"
    session = boto3.Session(region_name="us-east-2")
    assert BedrockModel(boto_session=session).region_name == "us-east-2"
    assert BedrockModel(region_name="eu-west-1", boto_session=session).region_name == "eu-west-1"


def test_client_is_created_lazily_once(monkeypatch: pytest.MonkeyPatch) -> None:
    created: list[str] = []

    class NoSession:
        def client(self, service: str, **kwargs: Any) -> Any:
            created.append(service)
            return object()

    monkeypatch.setattr(bedrock_module.boto3, "Session", NoSession)
    model = BedrockModel(temperature=0.2)
    assert model.config["model_id"] == DEFAULT_MODEL_ID
    assert model.config["temperature"] == 0.2
    assert created == []  # constructing needs neither credentials nor a client
    assert model.client is model.client
    assert created == ["bedrock-runtime"]


def test_client_config() -> None:
    model, _, _ = make_model()
    config: Any = model.client.meta.config
    assert "elsai" in (config.user_agent_extra or "")
    assert config.read_timeout == 120
    assert config.retries["total_max_attempts"] == 2
    assert model.client.meta.region_name == "us-west-2"


# --- request mapping ----------------------------------------------------------------------


def test_request_mapping_full() -> None:
    model, stubber, _ = make_model(
        max_tokens=512,
        temperature=0.3,
        top_p=0.9,
        stop_sequences=["STOP"],
        additional_request_fields={"thinking": {"type": "enabled", "budget_tokens": 1024}},
    )
    messages: list[Message] = [
        {"role": "user", "content": [{"text": "weather?"}]},
        {
            "role": "assistant",
            "content": [
                {"text": ""},
                {"toolUse": {"toolUseId": "t1", "name": "weather", "input": {"city": "Oslo"}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "t1",
                        "status": "success",
                        "content": [{"json": {"temp": 3}, "elsai_meta": 1}, {"text": "cold"}],  # type: ignore[typeddict-unknown-key]
                    }
                }
            ],
        },
    ]
    spec = {
        "name": "weather",
        "description": "Weather for a city",
        "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}},
    }
    expected = {
        "modelId": MODEL,
        "messages": [
            {"role": "user", "content": [{"text": "weather?"}]},
            {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": "t1", "name": "weather", "input": {"city": "Oslo"}}}
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "toolResult": {
                            "toolUseId": "t1",
                            "status": "success",
                            "content": [{"json": {"temp": 3}}, {"text": "cold"}],
                        }
                    }
                ],
            },
        ],
        "system": [{"text": "Be brief."}],
        "toolConfig": {"tools": [{"toolSpec": spec}], "toolChoice": {"tool": {"name": "weather"}}},
        "inferenceConfig": {
            "maxTokens": 512,
            "temperature": 0.3,
            "topP": 0.9,
            "stopSequences": ["STOP"],
        },
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
    }
    stubber.add_response("converse_stream", {"stream": text_stream()}, expected)
    request = ModelRequest(
        messages=messages,
        tool_specs=[spec],  # type: ignore[list-item]
        system_prompt="Be brief.",
        tool_choice={"tool": {"name": "weather"}},
    )
    collect(model, request)
    stubber.assert_no_pending_responses()
    # the caller's messages are untouched
    assert messages[1]["content"][0] == {"text": ""}
    assert "elsai_meta" in messages[2]["content"][0]["toolResult"]["content"][0]


def test_minimal_request_has_no_optional_fields() -> None:
    model, stubber, _ = make_model()
    stubber.add_response("converse_stream", {"stream": text_stream()}, BASIC)
    collect(model, ModelRequest(messages=[USER], tool_choice={"auto": {}}))
    stubber.assert_no_pending_responses()


def test_tools_without_tool_choice() -> None:
    model, stubber, _ = make_model()
    spec = {"name": "t", "description": "d", "inputSchema": {"json": {"type": "object"}}}
    expected = {**BASIC, "toolConfig": {"tools": [{"toolSpec": spec}]}}
    stubber.add_response("converse_stream", {"stream": text_stream()}, expected)
    collect(model, ModelRequest(messages=[USER], tool_specs=[spec]))  # type: ignore[list-item]
    stubber.assert_no_pending_responses()


# --- stream parsing -----------------------------------------------------------------------


def test_stream_text_and_tool_use_assemble() -> None:
    model, stubber, _ = make_model()
    stream = [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Let me "}}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "check."}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {
            "contentBlockStart": {
                "contentBlockIndex": 1,
                "start": {"toolUse": {"toolUseId": "tool-1", "name": "weather"}},
            }
        },
        {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"toolUse": {"input": '{"ci'}}}},
        {
            "contentBlockDelta": {
                "contentBlockIndex": 1,
                "delta": {"toolUse": {"input": 'ty": "Oslo"}'}},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 1}},
        {"messageStop": {"stopReason": "tool_use"}},
        {
            "metadata": {
                "usage": {
                    "inputTokens": 100,
                    "outputTokens": 20,
                    "totalTokens": 120,
                    "cacheReadInputTokens": 80,
                    "cacheWriteInputTokens": 10,
                },
                "metrics": {"latencyMs": 321},
            }
        },
    ]
    stubber.add_response("converse_stream", {"stream": stream}, BASIC)
    events = collect(model, ModelRequest(messages=[USER]))
    assert events[:3] == [
        TextDelta("Let me ", 0),
        TextDelta("check.", 0),
        BlockStop(0),
    ]
    assert ToolUseStart(1, "tool-1", "weather") in events
    assert [e for e in events if isinstance(e, ToolInputDelta)] == [
        ToolInputDelta(1, '{"ci'),
        ToolInputDelta(1, 'ty": "Oslo"}'),
    ]
    assert sum(isinstance(e, ModelStop) for e in events) == 1
    assert isinstance(events[-1], ModelStop)
    assembler = assemble(events)
    assert assembler.message() == {
        "role": "assistant",
        "content": [
            {"text": "Let me check."},
            {"toolUse": {"toolUseId": "tool-1", "name": "weather", "input": {"city": "Oslo"}}},
        ],
    }
    assert assembler.stop_reason == "tool_use"
    assert assembler.usage == {
        "inputTokens": 100,
        "outputTokens": 20,
        "totalTokens": 120,
        "cacheReadInputTokens": 80,
        "cacheWriteInputTokens": 10,
    }
    assert assembler.latency_ms == 321


def test_stream_reasoning_deltas() -> None:
    model, stubber, _ = make_model()
    stream = [
        {"messageStart": {"role": "assistant"}},
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"text": "thinking..."}},
            }
        },
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"signature": "sig"}},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"text": "Answer"}}},
        {"contentBlockStop": {"contentBlockIndex": 1}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]
    stubber.add_response("converse_stream", {"stream": stream}, BASIC)
    events = collect(model, ModelRequest(messages=[USER]))
    assert ReasoningDelta(0, text="thinking...") in events
    assert ReasoningDelta(0, signature="sig") in events
    assert assemble(events).message()["content"] == [
        {"reasoningContent": {"reasoningText": {"text": "thinking...", "signature": "sig"}}},
        {"text": "Answer"},
    ]


@pytest.mark.parametrize(
    ("bedrock", "elsai"),
    [
        ("end_turn", "end_turn"),
        ("max_tokens", "max_tokens"),
        ("stop_sequence", "stop_sequence"),
        ("guardrail_intervened", "guardrail_intervened"),
        ("content_filtered", "content_filtered"),
        ("model_context_window_exceeded", "max_tokens"),
        ("malformed_tool_use", "malformed_tool_use"),
    ],
)
def test_stop_reason_mapping(bedrock: str, elsai: str) -> None:
    model, stubber, _ = make_model()
    stubber.add_response("converse_stream", {"stream": text_stream(stop=bedrock)}, BASIC)
    events = collect(model, ModelRequest(messages=[USER]))
    stop = events[-1]
    assert isinstance(stop, ModelStop)
    assert stop.stop_reason == elsai
    assert stop.usage == {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7}
    assert stop.latency_ms == 42


# --- non-streaming ------------------------------------------------------------------------


def test_converse_non_streaming() -> None:
    model, stubber, _ = make_model(streaming=False, max_tokens=100)
    response = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "s"}}},
                    {"text": "Calling the tool."},
                    {"toolUse": {"toolUseId": "u1", "name": "add", "input": {"a": 1, "b": 2}}},
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 12, "outputTokens": 8, "totalTokens": 20},
        "metrics": {"latencyMs": 99},
    }
    stubber.add_response("converse", response, {**BASIC, "inferenceConfig": {"maxTokens": 100}})
    events = collect(model, ModelRequest(messages=[USER]))
    stubber.assert_no_pending_responses()
    assert sum(isinstance(e, ModelStop) for e in events) == 1
    assembler = assemble(events)
    assert assembler.message() == {
        "role": "assistant",
        "content": [
            {"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "s"}}},
            {"text": "Calling the tool."},
            {"toolUse": {"toolUseId": "u1", "name": "add", "input": {"a": 1, "b": 2}}},
        ],
    }
    assert assembler.stop_reason == "tool_use"
    assert assembler.usage == {"inputTokens": 12, "outputTokens": 8, "totalTokens": 20}
    assert assembler.latency_ms == 99


def test_converse_non_streaming_throttled_then_ok() -> None:
    model, stubber, sleeps = make_model(streaming=False)
    stubber.add_client_error(
        "converse", "ThrottlingException", "Too many requests", 429, expected_params=BASIC
    )
    response = {
        "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        "metrics": {"latencyMs": 1},
    }
    stubber.add_response("converse", response, BASIC)
    events = collect(model, ModelRequest(messages=[USER]))
    assert assemble(events).message()["content"] == [{"text": "ok"}]
    assert len(sleeps.calls) == 1


# --- retries and errors -------------------------------------------------------------------


def test_throttled_once_then_success() -> None:
    model, stubber, sleeps = make_model(initial_backoff=2.0, max_backoff=30.0)
    client_error(stubber, "ThrottlingException", "Too many requests, please wait.", 429)
    stubber.add_response("converse_stream", {"stream": text_stream("ok")}, BASIC)
    events = collect(model, ModelRequest(messages=[USER]))
    stubber.assert_no_pending_responses()
    assert assemble(events).message()["content"] == [{"text": "ok"}]
    assert len(sleeps.calls) == 1
    assert 0.0 <= sleeps.calls[0] <= 2.0


@pytest.mark.parametrize(
    "code", ["ServiceUnavailableException", "InternalServerException", "ModelNotReadyException"]
)
def test_transient_errors_are_retried(code: str) -> None:
    model, stubber, sleeps = make_model()
    client_error(stubber, code, "try again", 503)
    stubber.add_response("converse_stream", {"stream": text_stream("ok")}, BASIC)
    events = collect(model, ModelRequest(messages=[USER]))
    assert assemble(events).message()["content"] == [{"text": "ok"}]
    assert len(sleeps.calls) == 1


def test_throttling_beyond_budget_raises() -> None:
    model, stubber, sleeps = make_model(max_retries=3, initial_backoff=1.0, max_backoff=3.0)
    for _ in range(4):
        client_error(stubber, "ThrottlingException", "Too many requests", 429)
    with pytest.raises(ModelThrottledError) as info:
        collect(model, ModelRequest(messages=[USER]))
    stubber.assert_no_pending_responses()
    assert info.value.__cause__ is not None
    assert info.value.__cause__.response["Error"]["Code"] == "ThrottlingException"  # type: ignore[attr-defined]
    # full jitter, capped: attempt n waits in [0, min(max_backoff, initial * 2**n)]
    assert len(sleeps.calls) == 3
    for delay, cap in zip(sleeps.calls, [1.0, 2.0, 3.0], strict=True):
        assert 0.0 <= delay <= cap


def test_transient_beyond_budget_raises_model_error() -> None:
    model, stubber, sleeps = make_model(max_retries=1)
    client_error(stubber, "ServiceUnavailableException", "unavailable", 503)
    client_error(stubber, "ServiceUnavailableException", "unavailable", 503)
    with pytest.raises(ModelError) as info:
        collect(model, ModelRequest(messages=[USER]))
    assert not isinstance(info.value, ModelThrottledError)
    assert len(sleeps.calls) == 1


@pytest.mark.parametrize(
    "message",
    [
        "Input is too long for requested model.",
        "too many total text bytes: 9999999 > 9000000",
        "prompt is too long: 250000 tokens > 200000 maximum",
        "input length and `max_tokens` exceed context limit: 190000 + 32000 > 200000",
    ],
)
def test_context_overflow(message: str) -> None:
    model, stubber, sleeps = make_model()
    client_error(stubber, "ValidationException", message)
    with pytest.raises(ContextWindowOverflowError) as info:
        collect(model, ModelRequest(messages=[USER]))
    assert info.value.__cause__ is not None
    assert sleeps.calls == []


def test_other_client_errors_are_model_errors() -> None:
    model, stubber, sleeps = make_model()
    client_error(stubber, "AccessDeniedException", "You don't have access to the model", 403)
    with pytest.raises(ModelError) as info:
        collect(model, ModelRequest(messages=[USER]))
    assert not isinstance(info.value, ContextWindowOverflowError | ModelThrottledError)
    assert info.value.__cause__ is not None
    assert sleeps.calls == []


def test_plain_validation_error_is_model_error() -> None:
    model, stubber, _ = make_model()
    client_error(stubber, "ValidationException", "The provided model identifier is invalid.")
    with pytest.raises(ModelError) as info:
        collect(model, ModelRequest(messages=[USER]))
    assert not isinstance(info.value, ContextWindowOverflowError)


def stream_error(code: str, message: str = "boom") -> EventStreamError:
    return EventStreamError({"Error": {"Code": code, "Message": message}}, "ConverseStream")


def test_stream_error_before_any_event_is_retried() -> None:
    model, stubber, sleeps = make_model()
    failing = FailingStream(
        [{"messageStart": {"role": "assistant"}}], stream_error("throttlingException")
    )
    stubber.add_response("converse_stream", {"stream": failing}, BASIC)
    stubber.add_response("converse_stream", {"stream": text_stream("ok")}, BASIC)
    events = collect(model, ModelRequest(messages=[USER]))
    assert assemble(events).message()["content"] == [{"text": "ok"}]
    assert len(sleeps.calls) == 1
    assert failing.closed


def test_stream_error_after_events_is_not_retried() -> None:
    model, stubber, sleeps = make_model()
    failing = FailingStream(text_stream()[:2], stream_error("modelStreamErrorException"))
    stubber.add_response("converse_stream", {"stream": failing}, BASIC)
    seen: list[ModelEvent] = []

    async def run() -> None:
        async for event in model.stream(ModelRequest(messages=[USER])):
            seen.append(event)

    with pytest.raises(ModelError) as info:
        asyncio.run(run())
    assert isinstance(info.value.__cause__, EventStreamError)
    assert seen == [TextDelta("Hi there", 0)]
    assert sleeps.calls == []


def test_stream_validation_overflow() -> None:
    model, stubber, _ = make_model()
    failing = FailingStream([], stream_error("validationException", "Input is too long"))
    stubber.add_response("converse_stream", {"stream": failing}, BASIC)
    with pytest.raises(ContextWindowOverflowError):
        collect(model, ModelRequest(messages=[USER]))


def test_stream_error_event_dict_is_raised() -> None:
    model, stubber, sleeps = make_model(max_retries=0)
    stream = [{"throttlingException": {"message": "slow down"}}]
    stubber.add_response("converse_stream", {"stream": stream}, BASIC)
    with pytest.raises(ModelThrottledError):
        collect(model, ModelRequest(messages=[USER]))
    assert sleeps.calls == []


def test_read_timeout_is_retried() -> None:
    model, stubber, sleeps = make_model()
    failing = FailingStream([], ReadTimeoutError(endpoint_url="https://bedrock"))
    stubber.add_response("converse_stream", {"stream": failing}, BASIC)
    stubber.add_response("converse_stream", {"stream": text_stream("ok")}, BASIC)
    events = collect(model, ModelRequest(messages=[USER]))
    assert assemble(events).message()["content"] == [{"text": "ok"}]
    assert len(sleeps.calls) == 1


def test_consumer_errors_are_not_wrapped() -> None:
    model, stubber, _ = make_model()
    stubber.add_response("converse_stream", {"stream": text_stream()}, BASIC)

    async def run() -> None:
        async for _ in model.stream(ModelRequest(messages=[USER])):
            raise KeyError("consumer bug")

    with pytest.raises(KeyError):
        asyncio.run(run())


def test_tool_input_json_round_trip() -> None:
    """Non-streaming tool input is re-serialised to JSON text, like streamed fragments."""
    model, stubber, _ = make_model(streaming=False)
    payload = {"nested": {"list": [1, 2, 3]}, "s": "é"}
    response = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [{"toolUse": {"toolUseId": "x", "name": "f", "input": payload}}],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        "metrics": {"latencyMs": 1},
    }
    stubber.add_response("converse", response, BASIC)
    events = collect(model, ModelRequest(messages=[USER]))
    fragments = "".join(e.fragment for e in events if isinstance(e, ToolInputDelta))
    assert json.loads(fragments) == payload
