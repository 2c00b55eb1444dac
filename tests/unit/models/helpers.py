"""Offline HTTP for the provider tests: each SDK's own httpx `MockTransport`, no network.

A `MockAPI` answers requests from a queue of canned responses (recorded SSE streams, JSON
errors) and records every request body, so tests can assert the exact JSON a provider sent.
"""

from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

from elsai.models.base import Model, ModelEvent, ModelRequest
from elsai.models.stream import MessageAssembler

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def sdk_httpx(sdk: ModuleType) -> ModuleType:
    """The httpx module the SDK is built on (`httpx2` for recent releases, else `httpx`)."""
    base = importlib.import_module(f"{sdk.__name__}._base_client")
    module = getattr(base, "httpx2", None) or base.httpx
    assert isinstance(module, ModuleType)
    return module


def anthropic_sse(*events: dict[str, Any]) -> str:
    """An Anthropic SSE body from event payloads (the `event:` name is the payload's type)."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def openai_sse(*chunks: dict[str, Any]) -> str:
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


class Reply:
    """One canned HTTP response."""

    def __init__(
        self, status: int, body: str, content_type: str, headers: dict[str, str] | None = None
    ) -> None:
        self.status, self.body, self.content_type = status, body, content_type
        self.headers = headers or {}

    @classmethod
    def sse(cls, text: str) -> Reply:
        return cls(200, text, "text/event-stream")

    @classmethod
    def error(
        cls, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> Reply:
        return cls(status, json.dumps(body), "application/json", headers)


class MockAPI:
    """Serves `replies` in order (the last one repeats) and records each request."""

    def __init__(self, sdk: ModuleType, *replies: Reply) -> None:
        self.httpx = sdk_httpx(sdk)
        self.replies = list(replies)
        self.requests: list[Any] = []
        self.bodies: list[dict[str, Any]] = []

    def handler(self, request: Any) -> Any:
        self.requests.append(request)
        self.bodies.append(json.loads(request.content))
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        headers = {"content-type": reply.content_type, **reply.headers}
        return self.httpx.Response(reply.status, headers=headers, content=reply.body.encode())

    def http_client(self) -> Any:
        return self.httpx.AsyncClient(transport=self.httpx.MockTransport(self.handler))


class Sleeps:
    """Stands in for asyncio.sleep in the retry loop, recording the delays."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.calls.append(delay)


def collect(model: Model, request: ModelRequest) -> list[ModelEvent]:
    async def run() -> list[ModelEvent]:
        return [event async for event in model.stream(request)]

    return asyncio.run(run())


def assemble(events: list[ModelEvent]) -> MessageAssembler:
    assembler = MessageAssembler()
    for event in events:
        assembler.feed(event)
    return assembler


def collect_until_error(
    model: Model, request: ModelRequest
) -> tuple[list[ModelEvent], BaseException]:
    """The events yielded before the stream raised, and what it raised."""
    seen: list[ModelEvent] = []

    async def run() -> None:
        async for event in model.stream(request):
            seen.append(event)

    try:
        asyncio.run(run())
    except BaseException as exc:  # the caller asserts on it
        return seen, exc
    raise AssertionError(f"stream did not raise; events: {seen}")
