"""The streamable-HTTP transport with the caller's headers (kept apart: it imports httpx2)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

#: Like the SDK's own client: a response stream may stay open for long, connecting may not.
CONNECT_SECONDS, READ_SECONDS = 30.0, 300.0


@asynccontextmanager
async def open_http(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    """Yield the (read, write) streams of a streamable-HTTP session to `url`."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    timeout = httpx2.Timeout(CONNECT_SECONDS, read=READ_SECONDS)
    async with (
        httpx2.AsyncClient(headers=headers or None, timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams
