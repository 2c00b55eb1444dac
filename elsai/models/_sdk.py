"""What the providers built on optional SDKs (Anthropic, OpenAI) share.

Those SDKs are extras, so they are imported only when a provider is constructed, and a missing
one is reported with the exact `pip install` line. `SdkModel` holds the rest of what both
providers do in the same form: the settings and their `config`, one client per event loop,
the retried stream with its attempt that feeds a parser and always closes the SDK stream. The
helpers below it split a request body into SDK keywords and `extra_body` and read the bytes
of Converse images and documents. Each provider keeps its own conversion: the request body,
the parser of its stream and the classification of its errors (`classify_error`). Retrying, which Bedrock
shares too, lives in `elsai.models.retry`.
"""

from __future__ import annotations

import abc
import asyncio
import importlib
import inspect
import threading
import time
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar, Protocol

from elsai.models.base import DEFAULT_READ_TIMEOUT_S, Model, ModelEvent, ModelRequest
from elsai.models.retry import RetryPolicy, stream_with_retries


def import_sdk(module: str, owner: str, extra: str) -> ModuleType:
    """Import an optional SDK, or fail with the install line of the extra that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        hint = f'pip install "elsai[{extra}]"'
        raise ImportError(f"{owner} needs the '{extra}' extra: {hint}") from exc


IMAGE_MEDIA_TYPES = {
    "png": "image/png",
    "jpeg": "image/jpeg",
    "jpg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
}


def media_bytes(media: Mapping[str, Any]) -> bytes:
    """The bytes of a Converse image or document (`{"source": {"bytes": ...}}`)."""
    data = media.get("source", {}).get("bytes", b"")
    return data.encode() if isinstance(data, str) else bytes(data)


class LoopBoundClient:
    """Holds one SDK client per event loop.

    Async HTTP connection pools belong to the loop that opened them, and `Agent.__call__`
    runs each invocation in a fresh loop (agents may also run in several threads at once);
    sharing one client across loops fails on the second call. Clients are keyed weakly by
    loop, so a finished loop's client goes with it. A client the user passed in is theirs to
    manage and is always returned as is.
    """

    def __init__(self, given: Any, factory: Callable[[], Any]) -> None:
        self._given = given
        self._factory = factory
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = (
            weakref.WeakKeyDictionary()
        )
        self._outside_loop: Any = None
        self._lock = threading.Lock()

    def get(self) -> Any:
        if self._given is not None:
            return self._given
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            with self._lock:
                if self._outside_loop is None:
                    self._outside_loop = self._factory()
                return self._outside_loop
        with self._lock:
            client = self._by_loop.get(loop)
            if client is None:
                client = self._by_loop[loop] = self._factory()
            return client


def sdk_call_kwargs(method: Callable[..., Any], body: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments that make `method` send exactly `body` as its JSON request.

    SDK releases add and drop keyword parameters (recent `anthropic` releases have no
    `temperature`); keys the method does not name travel in `extra_body`, which the SDKs
    merge into the JSON unchanged, so one body works across the supported SDK versions.
    """
    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return dict(body)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return dict(body)  # a stand-in such as a mock: it takes anything
    kwargs = {k: v for k, v in body.items() if k in parameters}
    extra = {k: v for k, v in body.items() if k not in parameters}
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


@dataclass(frozen=True)
class SdkProvider:
    """Who a provider is: its SDK (also the name of the extra), client class and names."""

    sdk: str
    client_class: str
    owner: str  # the provider class, named in the install hint
    provider: str  # `config["provider"]`
    label: str  # the service as error messages name it


class StreamParser(Protocol):
    """Turns one attempt's raw stream items into elsai events."""

    def feed(self, raw: Any) -> list[ModelEvent]:
        """The events of one raw stream item."""
        ...

    def end(self, latency_ms: int) -> list[ModelEvent]:
        """The closing events once the stream is over; raises if it ended too early."""
        ...


def read_seconds(timeout: Any) -> float | None:
    """The read timeout of an SDK `timeout` setting: seconds, an httpx `Timeout`, or None."""
    if isinstance(timeout, bool):
        return None
    if isinstance(timeout, int | float):
        return float(timeout)
    read = getattr(timeout, "read", None)
    return float(read) if isinstance(read, int | float) and not isinstance(read, bool) else None


class SdkModel(Model):
    """Base of the providers on an optional SDK: settings, clients, the retried stream.

    The SDK's own retries are off unless `client_args` sets `max_retries`: the provider
    retries itself, with jitter and only before anything was yielded. The client waits
    `read_timeout` seconds for the service (connecting: 10) unless `client_args` sets
    `timeout`. A `client` passed in is used as is. `params` are merged last into the request
    body by the provider.
    """

    PROVIDER: ClassVar[SdkProvider]

    def __init__(
        self,
        model_id: str,
        *,
        client: Any,
        client_args: Mapping[str, Any] | None,
        params: Mapping[str, Any] | None,
        retry: RetryPolicy,
        read_timeout: float = DEFAULT_READ_TIMEOUT_S,
    ) -> None:
        info = self.PROVIDER
        self._sdk = import_sdk(info.sdk, info.owner, info.sdk)
        self._model_id = model_id
        self.client_args: dict[str, Any] = dict(client_args or {})
        self.params: dict[str, Any] = dict(params or {})
        self.retry = retry
        self._read_timeout = float(read_timeout)
        self._given_client = client
        self._clients = LoopBoundClient(client, self._new_client)

    @property
    def model_id(self) -> str:
        """The model name sent with every request."""
        return self._model_id

    @property
    def read_timeout(self) -> float | None:
        """Seconds the client waits for the service.

        A given client's own `timeout`, else `client_args`' `timeout` when it sets one (None
        when that is no limit), else the `read_timeout` argument.
        """
        if self._given_client is not None:
            return read_seconds(getattr(self._given_client, "timeout", None))
        if "timeout" in self.client_args:
            return read_seconds(self.client_args["timeout"])
        return self._read_timeout

    def _new_client(self) -> Any:
        client_class = getattr(self._sdk, self.PROVIDER.client_class)
        timeout = self._sdk.Timeout(self._read_timeout, connect=10.0)
        return client_class(**{"max_retries": 0, "timeout": timeout, **self.client_args})

    @property
    def client(self) -> Any:
        """The SDK's async client (created on first use, one per event loop)."""
        return self._clients.get()

    @property
    def config(self) -> dict[str, Any]:
        """The settings that identify this model, for logs and traces (no secrets)."""
        return {
            "provider": self.PROVIDER.provider,
            "model_id": self.model_id,
            **self._settings(),
            "params": self.params,
            "max_retries": self.retry.max_retries,
            "initial_backoff": self.retry.initial_backoff,
            "max_backoff": self.retry.max_backoff,
        }

    def _settings(self) -> dict[str, Any]:
        """The provider's own entries of `config`, shown after `model_id`."""
        return {}

    @abc.abstractmethod
    def build_request(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body of the API call for `request`."""

    @abc.abstractmethod
    def _endpoint(self) -> Callable[..., Any]:
        """The SDK method that sends one request (e.g. `client.messages.create`)."""

    @abc.abstractmethod
    def _new_parser(self) -> StreamParser:
        """A parser for one attempt's stream."""

    def _attempt(self) -> Callable[[dict[str, Any]], AsyncGenerator[ModelEvent, None]]:
        """What one attempt runs: a streamed call unless the provider says otherwise."""
        return self._stream_once

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Stream one model call as elsai events, retrying throttling and transient faults."""
        body = self.build_request(request)
        once = self._attempt()
        events = stream_with_retries(lambda: once(body), self.retry, self, self.PROVIDER.label)
        # `aclosing`: a consumer that stops early closes the provider stream there and then.
        async with aclosing(events):
            async for event in events:
                yield event

    async def _call(self, body: Mapping[str, Any]) -> Any:
        """Send `body` through the SDK: the stream, or the whole response when not streaming."""
        endpoint = self._endpoint()
        return await endpoint(**sdk_call_kwargs(endpoint, body))

    async def _stream_once(self, body: dict[str, Any]) -> AsyncGenerator[ModelEvent, None]:
        started = time.monotonic()
        stream = await self._call(body)
        parser = self._new_parser()
        try:
            async for raw in stream:
                for event in parser.feed(raw):
                    yield event
        finally:
            await stream.close()
        for event in parser.end(latency_ms=elapsed_ms(started)):
            yield event


def elapsed_ms(started: float) -> int:
    """Milliseconds since `started` (a `time.monotonic()` reading)."""
    return int((time.monotonic() - started) * 1000)
