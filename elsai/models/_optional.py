"""Plumbing shared by the providers built on optional SDKs (Anthropic, OpenAI).

Those SDKs are extras, so they are imported only when a provider is constructed, and a missing
one is reported with the exact `pip install` line. The rest is what both providers need in
the same form: the retry loop (same policy as Bedrock's: capped, fully jittered backoff, and
only while nothing was yielded, so a caller never sees a reply twice), one client per event
loop, the split of a request body into SDK keywords and `extra_body`, and reading the bytes
of Converse images and documents.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import random
import threading
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from types import ModuleType
from typing import Any

from elsai.errors import ElsaiError, ModelError
from elsai.models.base import ModelEvent

Sleep = Callable[[float], Awaitable[None]]
Classify = Callable[[BaseException], str]
Translate = Callable[[Exception, str], ModelError]


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


class RetryPolicy:
    """Retry settings of a provider; `sleep` is replaced in tests so retries do not wait."""

    def __init__(self, max_retries: int, initial_backoff: float, max_backoff: float) -> None:
        self.max_retries = max(0, max_retries)
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.sleep: Sleep = asyncio.sleep
        self.rng = random.Random()

    def backoff(self, attempt: int) -> float:
        """Full jitter: uniform in [0, min(max_backoff, initial * 2**attempt)]."""
        cap = min(self.max_backoff, self.initial_backoff * (2**attempt))
        return self.rng.uniform(0.0, cap)


async def stream_with_retries(
    attempt: Callable[[], AsyncGenerator[ModelEvent, None]],
    policy: RetryPolicy,
    classify: Classify,
    translate: Translate,
) -> AsyncIterator[ModelEvent]:
    """Yield the events of `attempt()`, retrying throttled and transient failures.

    A retry happens only before the first event was yielded; after that the consumer has seen
    part of a reply, so the error is translated and raised instead.
    """
    tries = 0
    while True:
        source = attempt()
        yielded = False
        try:
            while True:
                # Only the provider call sits inside `try`: errors thrown into this generator
                # by the consumer must not be taken for provider errors.
                try:
                    event = await source.__anext__()
                except StopAsyncIteration:
                    return
                except ElsaiError:
                    raise
                except Exception as exc:
                    kind = classify(exc)
                    retryable = kind in ("throttled", "transient")
                    if retryable and not yielded and tries < policy.max_retries:
                        break
                    raise translate(exc, kind) from exc
                yielded = True
                yield event
        finally:
            await source.aclose()
        await policy.sleep(policy.backoff(tries))
        tries += 1
