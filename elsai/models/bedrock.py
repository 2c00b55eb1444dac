"""BedrockModel: the default provider, Amazon Bedrock's Converse / ConverseStream APIs.

elsai messages already use the Converse shape, so the provider mostly forwards them. Its real
work is elsewhere: turning the event stream into elsai's event vocabulary, running boto3's
blocking calls off the event loop so concurrent agents do not stall each other, retrying
throttling and transient faults with capped, fully jittered backoff, and translating Bedrock
errors into the exceptions of `elsai.errors`.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Iterator, Mapping
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast, overload

import boto3
from botocore import exceptions as boto_errors
from botocore.config import Config

from elsai.errors import ModelConfigurationError
from elsai.models._bedrock_convert import StreamParser, clean_message, response_events
from elsai.models.base import DEFAULT_READ_TIMEOUT_S as DEFAULT_READ_TIMEOUT_S  # re-exported
from elsai.models.base import Model, ModelErrorKind, ModelEvent, ModelRequest
from elsai.models.bedrock_setup import ACCESS_STEPS, no_credentials_message, resolve_region
from elsai.models.bedrock_setup import DEFAULT_REGION as DEFAULT_REGION  # re-exported
from elsai.models.retry import RetryPolicy, Sleep, stream_with_retries

if TYPE_CHECKING:
    from mypy_boto3_bedrock_runtime import BedrockRuntimeClient

DEFAULT_MODEL_ID = "us.anthropic.claude-sonnet-4-6"
"""Claude Sonnet 4.6 through the US cross-Region inference profile (callable from us-west-2)."""

# DEFAULT_REGION (us-west-2, the spec's default) lives in bedrock_setup with the region rule;
# DEFAULT_READ_TIMEOUT_S, shared by the network providers, in elsai.models.base.

_ACCESS_DENIED = {"accessdeniedexception"}
_THROTTLING = {"throttlingexception"}
_TRANSIENT = {
    "serviceunavailableexception",
    "internalserverexception",
    "modelnotreadyexception",
    "modelstreamerrorexception",
}
_OVERFLOW_HINTS = (
    "input is too long",
    "too many total text bytes",
    "prompt is too long",
    "exceed context limit",
    "exceeds the context window",
    "maximum context length",
    "too many input tokens",
)

_T = TypeVar("_T")


class _RetrySetting(Generic[_T]):
    """A `BedrockModel` attribute that reads and writes one field of the model's `retry`."""

    def __init__(self, field: str) -> None:
        self.field = field

    @overload
    def __get__(self, model: None, owner: type) -> _RetrySetting[_T]: ...
    @overload
    def __get__(self, model: BedrockModel, owner: type) -> _T: ...
    def __get__(self, model: BedrockModel | None, owner: type) -> _T | _RetrySetting[_T]:
        return self if model is None else cast(_T, getattr(model.retry, self.field))

    def __set__(self, model: BedrockModel, value: _T) -> None:
        setattr(model.retry, self.field, value)


class BedrockModel(Model):
    """Claude (or any Converse-capable model) on Amazon Bedrock.

    The boto3 client is created on first use, so building an agent needs no AWS credentials.
    `client` is public so tests can attach a `botocore.stub.Stubber`. Retry settings live in
    `retry`, as on the other providers; the attributes below name the same fields.
    `read_timeout` (seconds) is botocore's wait for the service; a `boto_client_config` that
    sets its own wins, and the `read_timeout` property reports the one in force.
    """

    max_retries: _RetrySetting[int] = _RetrySetting("max_retries")
    initial_backoff: _RetrySetting[float] = _RetrySetting("initial_backoff")
    max_backoff: _RetrySetting[float] = _RetrySetting("max_backoff")
    _sleep = _RetrySetting[Sleep]("sleep")  # replaced in tests so retries do not wait
    _rng = _RetrySetting[random.Random]("rng")

    def __init__(
        self,
        model_id: str = DEFAULT_MODEL_ID,
        *,
        region_name: str | None = None,
        boto_session: boto3.Session | None = None,
        boto_client_config: Config | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop_sequences: list[str] | None = None,
        streaming: bool = True,
        additional_request_fields: dict[str, Any] | None = None,
        max_retries: int = 6,
        initial_backoff: float = 1.0,
        max_backoff: float = 30.0,
        read_timeout: float = DEFAULT_READ_TIMEOUT_S,
    ) -> None:
        self._model_id = model_id
        self._read_timeout = float(read_timeout)
        self.region_name: str = region_name or resolve_region(boto_session)
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.stop_sequences: list[str] | None = list(stop_sequences) if stop_sequences else None
        self.streaming = streaming
        self.additional_request_fields = additional_request_fields
        self.retry: RetryPolicy = RetryPolicy(max_retries, initial_backoff, max_backoff)
        self._boto_session = boto_session
        self._boto_client_config = boto_client_config
        self._client: BedrockRuntimeClient | None = None
        self._client_lock = threading.Lock()
        self._credentials_checked = False

    def _check_credentials(self) -> None:
        """Fail before the first request, and say what to do, when no credentials exist."""
        session = self._boto_session or boto3.Session()
        if session.get_credentials() is None:
            raise ModelConfigurationError(no_credentials_message(self.model_id, self.region_name))
        self._credentials_checked = True

    @property
    def model_id(self) -> str:
        """The modelId of every request: a model id, an inference profile id or an ARN."""
        return self._model_id

    @property
    def access_help(self) -> str:
        """How an account gets access to a Bedrock model (first use, IAM)."""
        return ACCESS_STEPS

    @property
    def read_timeout(self) -> float:
        """Seconds botocore waits for the service (the client config's `read_timeout`).

        The serverless runtime sizes a slice's stop margin from it, so that a model call is
        only started when it can finish before the Lambda deadline.
        """
        return float(getattr(self._client_config(), "read_timeout", self._read_timeout))

    @property
    def client(self) -> BedrockRuntimeClient:
        """The `bedrock-runtime` client, created once on first access."""
        with self._client_lock:
            if self._client is None:
                session = self._boto_session or boto3.Session()
                self._client = session.client(
                    "bedrock-runtime", region_name=self.region_name, config=self._client_config()
                )
            return self._client

    def _client_config(self) -> Config:
        # We retry ourselves (with jitter, and only before any event was yielded), so botocore
        # gets just one extra attempt; long replies need a generous read timeout.
        ours = Config(
            user_agent_extra="elsai",
            read_timeout=self._read_timeout,
            connect_timeout=10,
            retries={"total_max_attempts": 2, "mode": "standard"},
        )
        theirs = self._boto_client_config
        if theirs is None:
            return ours
        merged = ours.merge(theirs)
        extra = getattr(theirs, "user_agent_extra", None)
        if extra and "elsai" not in extra:
            merged = merged.merge(Config(user_agent_extra=f"{extra} elsai"))
        return merged

    @property
    def config(self) -> dict[str, Any]:
        """The settings that identify this model, for logs and traces (no secrets)."""
        return {
            "provider": "bedrock",
            "model_id": self.model_id,
            "region_name": self.region_name,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "stop_sequences": self.stop_sequences,
            "streaming": self.streaming,
            "additional_request_fields": self.additional_request_fields,
            "max_retries": self.max_retries,
            "initial_backoff": self.initial_backoff,
            "max_backoff": self.max_backoff,
        }

    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of `converse` / `converse_stream` for `request`."""
        params: dict[str, Any] = {
            "modelId": self.model_id,
            "messages": [clean_message(m) for m in request.messages],
        }
        if request.system_prompt:
            params["system"] = [{"text": request.system_prompt}]
        if request.tool_specs:
            tool_config: dict[str, Any] = {
                "tools": [{"toolSpec": dict(s)} for s in request.tool_specs]
            }
            if request.tool_choice:
                tool_config["toolChoice"] = dict(request.tool_choice)
            params["toolConfig"] = tool_config
        inference: dict[str, Any] = {}
        if self.max_tokens is not None:
            inference["maxTokens"] = self.max_tokens
        if self.temperature is not None:
            inference["temperature"] = self.temperature
        if self.top_p is not None:
            inference["topP"] = self.top_p
        if self.stop_sequences:
            inference["stopSequences"] = list(self.stop_sequences)
        if inference:
            params["inferenceConfig"] = inference
        if self.additional_request_fields:
            params["additionalModelRequestFields"] = self.additional_request_fields
        return params

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one model call as elsai events, retrying throttling and transient faults."""
        params = self.build_request(request)
        if not self._credentials_checked and self._client is None:
            await asyncio.to_thread(self._check_credentials)
        once = self._stream_once if self.streaming else self._converse_once
        # `aclosing`: a consumer that stops early closes the provider stream there and then.
        events = stream_with_retries(lambda: once(params), self.retry, self, "Bedrock")
        async with aclosing(events):
            async for event in events:
                yield event

    async def _stream_once(self, params: dict[str, Any]) -> AsyncGenerator[ModelEvent, None]:
        response = await asyncio.to_thread(lambda: self.client.converse_stream(**params))
        events: Iterable[Mapping[str, Any]] = cast(Iterable[Mapping[str, Any]], response["stream"])
        iterator: Iterator[Mapping[str, Any]] = iter(events)
        parser = StreamParser()
        try:
            while True:
                # One worker-thread hop per event: EventStream reads block on the socket.
                raw = await asyncio.to_thread(next, iterator, None)
                if raw is None:
                    break
                for event in parser.feed(raw):
                    yield event
        finally:
            close = getattr(events, "close", None)
            if callable(close):
                close()
        yield parser.stop()

    async def _converse_once(self, params: dict[str, Any]) -> AsyncGenerator[ModelEvent, None]:
        response = await asyncio.to_thread(lambda: self.client.converse(**params))
        for event in response_events(cast(Mapping[str, Any], response)):
            yield event

    def classify_error(self, exc: BaseException) -> ModelErrorKind:
        """Bedrock's error codes and botocore's connection errors (see `ModelErrorKind`)."""
        if isinstance(exc, boto_errors.ClientError):
            error = exc.response.get("Error", {})
            code = str(error.get("Code", "")).lower()
            message = str(error.get("Message", "")).lower()
            if code in _ACCESS_DENIED:
                return "access_denied"
            if code in _THROTTLING:
                return "throttled"
            if code in _TRANSIENT:
                return "transient"
            if code == "validationexception" and any(hint in message for hint in _OVERFLOW_HINTS):
                return "overflow"
            return "other"
        if isinstance(exc, boto_errors.ConnectionError | boto_errors.HTTPClientError):
            return "transient"
        return super().classify_error(exc)
