"""OpenAIModel: OpenAI Chat Completions and the servers that speak it, via the `openai` SDK.

`client_args={"base_url": "http://localhost:11434/v1", "api_key": "x"}` reaches Ollama, vLLM,
llama.cpp and other OpenAI-compatible servers. The provider translates Converse-shaped
messages into chat messages (tool results become `role: "tool"` messages), folds the streamed
chunks back into elsai events, and maps errors onto `elsai.errors` (a 429 is retried, then
becomes `ModelThrottledError`; a refused key, 401 or 403, becomes `ModelAccessDeniedError` at once).

Some compatible servers bend the protocol; the parser tolerates the common cases: a tool call
without an id gets one, several calls reported under one index are kept apart by id, and
`finish_reason: "stop"` after tool calls is read as `tool_use` so the calls are not dropped.
A stream that ends with no `finish_reason` at all is an error, not an empty answer: llama.cpp's
server, for one, closes a 200 stream without a chunk when its handler fails.

The SDK is an optional extra (`pip install "elsai[openai]"`), imported when the model is
constructed, never by `import elsai`.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncGenerator, Callable, Mapping
from typing import Any

from elsai.models._openai_request import convert_messages, convert_tool, convert_tool_choice
from elsai.models._sdk import SdkModel, SdkProvider, elapsed_ms
from elsai.models.base import (
    DEFAULT_READ_TIMEOUT_S,
    BlockStop,
    ModelErrorKind,
    ModelEvent,
    ModelRequest,
    ModelStop,
    ReasoningDelta,
    TextDelta,
    ToolInputDelta,
    ToolUseStart,
)
from elsai.models.retry import RetryPolicy
from elsai.types import StopReason, Usage, empty_usage

DEFAULT_MODEL_ID = "gpt-4o"
"""Widely available, tool-capable and multimodal; override it for newer or local models."""

_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filtered",
}
_OVERFLOW_CODES = {"context_length_exceeded", "exceed_context_size_error"}
_OVERFLOW_HINTS = (
    "maximum context length",
    "context length exceeded",
    "context_length_exceeded",
    "exceeds the available context size",
    "exceed context window",
    "prompt is too long",
    "too many tokens",
)

_ACCESS_HELP = (
    "The server refused the API key for this model (401: the key is invalid or revoked; 403: "
    "its project or organisation may not use the model, or not from this region). Check the "
    "key the model is built with (OPENAI_API_KEY or client_args['api_key']; deployed, the "
    "function's environment or secret) and, on OpenAI, the project's model access (Settings, "
    "Limits); a compatible server: its own key settings."
)

# Content block layout of the assembled message: reasoning first, then text, then tool calls.
_REASONING_INDEX = 0
_TEXT_INDEX = 1
_FIRST_TOOL_INDEX = 2


class IncompleteStreamError(Exception):
    """A stream that closed without saying why it stopped: part of an answer, or none."""


class OpenAIModel(SdkModel):
    """A chat-completions model: OpenAI's, or any OpenAI-compatible server's.

    `client_args` go to `openai.AsyncOpenAI(...)`. The SDK's own retries are off unless
    `client_args` sets `max_retries`: this provider retries itself, with jitter and only
    before anything was yielded. A `client` you pass is used as is. `params` are merged last
    into the request body (e.g. `{"max_completion_tokens": 1024, "temperature": 0}`).
    `streaming=False` asks for whole completions: for servers that report usage only then
    (llama.cpp's ignores `stream_options.include_usage`). `read_timeout`: seconds to wait for
    the server (a whole completion when not streaming), unless `client_args` sets `timeout`.
    """

    PROVIDER = SdkProvider(
        "openai", "AsyncOpenAI", "OpenAIModel", "openai", "OpenAI-compatible server"
    )

    def __init__(
        self,
        model_id: str = DEFAULT_MODEL_ID,
        *,
        client: Any = None,
        client_args: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        max_retries: int = 6,
        initial_backoff: float = 1.0,
        max_backoff: float = 30.0,
        streaming: bool = True,
        read_timeout: float = DEFAULT_READ_TIMEOUT_S,
    ) -> None:
        retry = RetryPolicy(max_retries, initial_backoff, max_backoff)
        super().__init__(model_id, client=client, client_args=client_args, params=params,
                         retry=retry, read_timeout=read_timeout)  # fmt: skip
        self.streaming = streaming

    @property
    def config(self) -> dict[str, Any]:
        """The settings that identify this model, for logs and traces (no secrets)."""
        return {**super().config, "streaming": self.streaming}

    def _settings(self) -> dict[str, Any]:
        return {"base_url": self.client_args.get("base_url")}

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of the chat completions call for `request`."""
        messages: list[dict[str, Any]] = []
        if request.system_prompt:
            messages.append({"role": "system", "content": request.system_prompt})
        for message in request.messages:
            messages.extend(convert_messages(message))
        body: dict[str, Any] = {"model": self.model_id, "messages": messages}
        if request.tool_specs:
            body["tools"] = [convert_tool(spec) for spec in request.tool_specs]
            if request.tool_choice:
                body["tool_choice"] = convert_tool_choice(request.tool_choice)
        body.update(self.params)
        body["stream"] = self.streaming
        if self.streaming:
            body["stream_options"] = {"include_usage": True}
        return body

    def _endpoint(self) -> Any:
        return self.client.chat.completions.create

    def _new_parser(self) -> _StreamParser:
        return _StreamParser()

    def _attempt(self) -> Callable[[dict[str, Any]], AsyncGenerator[ModelEvent, None]]:
        return self._stream_once if self.streaming else self._complete_once

    async def _complete_once(self, body: dict[str, Any]) -> AsyncGenerator[ModelEvent, None]:
        started = time.monotonic()
        response = await self._call(body)
        parser = _StreamParser()
        for event in parser.feed_completion(response):
            yield event
        for event in parser.finish(latency_ms=elapsed_ms(started)):
            yield event

    @property
    def access_help(self) -> str:
        """Where a refused OpenAI (or compatible server's) key is fixed."""
        return _ACCESS_HELP

    def classify_error(self, exc: BaseException) -> ModelErrorKind:
        """The SDK's status codes and error codes (see `ModelErrorKind`)."""
        sdk = self._sdk
        if isinstance(exc, sdk.APIConnectionError):
            return "transient"  # includes timeouts
        if not isinstance(exc, sdk.APIError):
            return super().classify_error(exc)
        status = getattr(exc, "status_code", None)
        code = str(getattr(exc, "code", None) or "")
        kind = str(getattr(exc, "type", None) or "")
        message = str(getattr(exc, "message", exc)).lower()
        if status in (401, 403):
            return "access_denied"
        if code in _OVERFLOW_CODES or kind in _OVERFLOW_CODES:
            return "overflow"
        if status == 429 or code == "rate_limit_exceeded":
            # An exhausted quota is also a 429, but waiting will not refill it.
            return "other" if code == "insufficient_quota" else "throttled"
        if status == 500 and "validation error" in message:
            return "other"  # llama.cpp's server answers a request it cannot parse with a 500
        if (status is not None and status >= 500) or kind == "server_error":
            return "transient"
        if (status is None or status in (400, 413)) and any(h in message for h in _OVERFLOW_HINTS):
            return "overflow"
        return "other"


class _StreamParser:
    """Folds chat-completion chunks into elsai events, collecting stop reason and usage."""

    def __init__(self) -> None:
        self.finish_reason: str | None = None
        self.usage: Usage = empty_usage()
        self._open: set[int] = set()
        self._calls: dict[int, tuple[int, str]] = {}  # OpenAI index -> (block index, call id)
        self._next_block = _FIRST_TOOL_INDEX

    def feed(self, chunk: Any) -> list[ModelEvent]:
        if getattr(chunk, "usage", None) is not None:
            self.usage = _usage(chunk.usage)
        events: list[ModelEvent] = []
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) != 0:
                continue  # only one completion is requested
            delta = choice.delta
            if delta is not None:
                events.extend(self._delta(delta))
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
        return events

    def feed_completion(self, response: Any) -> list[ModelEvent]:
        """A whole (non-streamed) completion: its message is read like one big delta."""
        if getattr(response, "usage", None) is not None:
            self.usage = _usage(response.usage)
        events: list[ModelEvent] = []
        for choice in getattr(response, "choices", None) or []:
            if getattr(choice, "index", 0) == 0:
                if choice.message is not None:
                    events.extend(self._delta(choice.message))
                self.finish_reason = choice.finish_reason
        return events

    def _delta(self, delta: Any) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        # Not in OpenAI's API, but vLLM, Ollama and others stream thinking under these names.
        reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
        if isinstance(reasoning, str) and reasoning:
            self._open.add(_REASONING_INDEX)
            events.append(ReasoningDelta(_REASONING_INDEX, reasoning))
        if delta.content:
            self._open.add(_TEXT_INDEX)
            events.append(TextDelta(text=delta.content, index=_TEXT_INDEX))
        for call in getattr(delta, "tool_calls", None) or []:
            events.extend(self._tool_call(call))
        return events

    def _tool_call(self, call: Any) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        index = getattr(call, "index", None)  # whole completions number no calls
        position = index if index is not None else len(self._calls)
        function = call.function
        known = self._calls.get(position)
        if known is None or (call.id and call.id != known[1]):
            block = self._next_block
            self._next_block += 1
            call_id = call.id or f"call_{uuid.uuid4().hex[:24]}"
            self._calls[position] = (block, call_id)
            self._open.add(block)
            name = (function.name if function is not None else None) or ""
            events.append(ToolUseStart(block, call_id, name))
        block = self._calls[position][0]
        arguments = function.arguments if function is not None else None
        if arguments:
            events.append(ToolInputDelta(block, arguments))
        return events

    def end(self, latency_ms: int) -> list[ModelEvent]:
        """The closing events of a stream, which must have said why it stopped."""
        if self.finish_reason is None:
            raise IncompleteStreamError(
                "the stream ended without a finish_reason: the server stopped before its answer "
                "was complete (its log says why)"
            )
        return self.finish(latency_ms)

    def finish(self, latency_ms: int) -> list[ModelEvent]:
        events: list[ModelEvent] = [BlockStop(index) for index in sorted(self._open)]
        reason = _FINISH_REASONS.get(self.finish_reason or "stop", "end_turn")
        if reason == "end_turn" and self._calls:
            reason = "tool_use"  # servers that say "stop" after calling tools
        events.append(ModelStop(stop_reason=reason, usage=self.usage, latency_ms=latency_ms))
        return events


def _usage(raw: Any) -> Usage:
    usage = empty_usage()
    usage["inputTokens"] = int(getattr(raw, "prompt_tokens", 0) or 0)
    usage["outputTokens"] = int(getattr(raw, "completion_tokens", 0) or 0)
    total = getattr(raw, "total_tokens", None)
    usage["totalTokens"] = int(total) if total else usage["inputTokens"] + usage["outputTokens"]
    details = getattr(raw, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    if cached:
        usage["cacheReadInputTokens"] = int(cached)
    return usage
