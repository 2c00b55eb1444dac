"""Plumbing shared by the providers built on optional SDKs (Anthropic, OpenAI).

Those SDKs are extras, so they are imported only when a provider is constructed, and a missing
one is reported with the exact `pip install` line. The rest is what both providers need in
the same form: one client per event loop, the split of a request body into SDK keywords and
`extra_body`, and reading the bytes of Converse images and documents. Retrying, which Bedrock
shares too, lives in `elsai.models.retry`.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import threading
import weakref
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any


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
