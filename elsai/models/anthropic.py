"""AnthropicModel: Claude through Anthropic's Messages API, with the official `anthropic` SDK.

elsai speaks Converse-shaped messages; this provider translates them into Messages API
content blocks, turns the raw server-sent events back into elsai events, and maps Anthropic's
errors onto `elsai.errors` (429 and 529 "overloaded" are retried, then become
`ModelThrottledError`; "prompt is too long" becomes `ContextWindowOverflowError`; a refused
key, 401 or 403, becomes `ModelAccessDeniedError` at once).

The SDK is an optional extra (`pip install "elsai[anthropic]"`), imported when the model is
constructed, never by `import elsai`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from elsai.errors import ModelError
from elsai.models._anthropic_request import (
    convert_messages,
    convert_tool,
    convert_tool_choice,
)
from elsai.models._sdk import SdkModel, SdkProvider
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

DEFAULT_MODEL_ID = "claude-sonnet-4-6"
"""Claude Sonnet 4.6, the model `BedrockModel` defaults to: switching provider keeps the model."""

DEFAULT_MAX_TOKENS = 4096

_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "content_filtered",
    # The reply was cut short by the context window: to the loop this is a truncated reply.
    "model_context_window_exceeded": "max_tokens",
    # A server-side tool paused a long turn; elsai has no continuation, so the turn ends.
    "pause_turn": "end_turn",
}
_OVERFLOW_HINTS = (
    "prompt is too long",
    "input is too long",
    "exceed context limit",
    "exceeds the context window",
    "context window",
    "too many input tokens",
)
_ACCESS_HELP = (
    "Anthropic refused the API key for this model (401: the key is invalid or revoked; 403: "
    "its workspace or organisation may not use the model). Check the key the model is built "
    "with (ANTHROPIC_API_KEY or client_args['api_key']; deployed, the function's environment "
    "or secret) and the workspace's model access in the Anthropic Console."
)


class AnthropicModel(SdkModel):
    """Claude on the Anthropic API.

    `client_args` go to `anthropic.AsyncAnthropic(...)` (api_key, base_url, timeout, ...). The
    SDK's own retries are off unless `client_args` sets `max_retries`: this provider retries
    itself, with jitter and only before anything was yielded. A `client` you pass is used as is
    (its retries then stack with ours). `params` are merged last into the request body
    (e.g. `{"thinking": {"type": "enabled", "budget_tokens": 2048}, "top_k": 5}`).
    `read_timeout`: seconds to wait for the service, unless `client_args` sets `timeout`.
    """

    PROVIDER = SdkProvider(
        "anthropic", "AsyncAnthropic", "AnthropicModel", "anthropic", "Anthropic"
    )

    def __init__(
        self,
        model_id: str = DEFAULT_MODEL_ID,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float | None = None,
        client: Any = None,
        client_args: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        max_retries: int = 6,
        initial_backoff: float = 1.0,
        max_backoff: float = 30.0,
        read_timeout: float = DEFAULT_READ_TIMEOUT_S,
    ) -> None:
        retry = RetryPolicy(max_retries, initial_backoff, max_backoff)
        super().__init__(model_id, client=client, client_args=client_args, params=params,
                         retry=retry, read_timeout=read_timeout)  # fmt: skip
        self.max_tokens = max_tokens
        self.temperature = temperature

    def _settings(self) -> dict[str, Any]:
        return {"max_tokens": self.max_tokens, "temperature": self.temperature}

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of the Messages API call for `request`."""
        body: dict[str, Any] = {
            "model": self.model_id,
            "max_tokens": self.max_tokens,
            "messages": convert_messages(request.messages),
        }
        if request.system_prompt:
            body["system"] = request.system_prompt
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if request.tool_specs:
            body["tools"] = [convert_tool(spec) for spec in request.tool_specs]
            if request.tool_choice:
                body["tool_choice"] = convert_tool_choice(request.tool_choice)
        body.update(self.params)
        body["stream"] = True
        return body

    def _endpoint(self) -> Any:
        return self.client.messages.create

    def _new_parser(self) -> _StreamParser:
        return _StreamParser()

    @property
    def access_help(self) -> str:
        """Where a refused Anthropic key is fixed."""
        return _ACCESS_HELP

    def classify_error(self, exc: BaseException) -> ModelErrorKind:
        """Anthropic's status codes and error types (see `ModelErrorKind`)."""
        sdk = self._sdk
        if isinstance(exc, sdk.APIStatusError) or (
            isinstance(exc, sdk.APIError) and isinstance(getattr(exc, "body", None), dict)
        ):
            status = getattr(exc, "status_code", None)
            body = getattr(exc, "body", None)
            error = body.get("error", body) if isinstance(body, dict) else None
            error = error if isinstance(error, dict) else {}
            kind = str(error.get("type", ""))
            message = f"{exc} {error.get('message', '')}".lower()
            if status in (401, 403) or kind in ("authentication_error", "permission_error"):
                return "access_denied"
            if status in (429, 529) or kind in ("rate_limit_error", "overloaded_error"):
                return "throttled"
            if (status is not None and status >= 500) or kind == "api_error":
                return "transient"
            if status == 413 or kind == "request_too_large":
                return "overflow"
            if any(hint in message for hint in _OVERFLOW_HINTS):
                return "overflow"
            return "other"
        if isinstance(exc, sdk.APIConnectionError):
            return "transient"  # includes timeouts
        return super().classify_error(exc)


class _StreamParser:
    """Maps Messages API stream events to elsai events, collecting stop reason and usage."""

    def __init__(self) -> None:
        self.stop_reason: StopReason = "end_turn"
        self.finished = False
        self._usage: dict[str, int] = {}

    def feed(self, raw: Any) -> list[ModelEvent]:
        kind = getattr(raw, "type", None)
        if kind == "content_block_delta":
            return _delta_events(raw.index, raw.delta)
        if kind == "content_block_start":
            return _start_events(raw.index, raw.content_block)
        if kind == "content_block_stop":
            return [BlockStop(raw.index)]
        if kind == "message_start":
            self._add_usage(getattr(raw.message, "usage", None))
        elif kind == "message_delta":
            reason = getattr(raw.delta, "stop_reason", None)
            if reason:
                self.stop_reason = _STOP_REASONS.get(reason, "end_turn")
            self._add_usage(getattr(raw, "usage", None))
        elif kind == "message_stop":
            self.finished = True
        return []

    def _add_usage(self, usage: Any) -> None:
        # message_start carries the input counts, message_delta the (cumulative) output count;
        # later non-null values win.
        for name in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ):
            value = getattr(usage, name, None)
            if value is not None:
                self._usage[name] = int(value)

    def end(self, latency_ms: int) -> list[ModelEvent]:
        if not self.finished:
            raise ModelError("Anthropic stream ended before message_stop")
        return [ModelStop(stop_reason=self.stop_reason, usage=self.usage(), latency_ms=latency_ms)]

    def usage(self) -> Usage:
        """Anthropic's input count excludes cached tokens; the total counts them all."""
        raw = self._usage
        usage = empty_usage()
        usage["inputTokens"] = raw.get("input_tokens", 0)
        usage["outputTokens"] = raw.get("output_tokens", 0)
        cache_read = raw.get("cache_read_input_tokens", 0)
        cache_write = raw.get("cache_creation_input_tokens", 0)
        total = usage["inputTokens"] + usage["outputTokens"] + cache_read + cache_write
        usage["totalTokens"] = total
        if cache_read:
            usage["cacheReadInputTokens"] = cache_read
        if cache_write:
            usage["cacheWriteInputTokens"] = cache_write
        return usage


def _start_events(index: int, block: Any) -> list[ModelEvent]:
    kind = getattr(block, "type", None)
    if kind == "tool_use":
        # The start carries `input: {}`; the real input arrives as input_json_delta fragments.
        return [ToolUseStart(index, block.id, block.name)]
    if kind == "text" and block.text:
        return [TextDelta(text=block.text, index=index)]
    if kind == "thinking" and (block.thinking or getattr(block, "signature", None)):
        return [ReasoningDelta(index, block.thinking, getattr(block, "signature", None) or None)]
    return []  # redacted thinking and server-side tool blocks have no elsai event


def _delta_events(index: int, delta: Any) -> list[ModelEvent]:
    kind = getattr(delta, "type", None)
    if kind == "text_delta":
        return [TextDelta(text=delta.text, index=index)]
    if kind == "input_json_delta":
        return [ToolInputDelta(index, delta.partial_json)]
    if kind == "thinking_delta":
        return [ReasoningDelta(index, delta.thinking)]
    if kind == "signature_delta":
        return [ReasoningDelta(index, signature=delta.signature)]
    return []
