"""The streamable-HTTP transport with the caller's headers (kept apart: it imports httpx2)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any


@asynccontextmanager
async def open_http(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    """Yield the (read, write) streams of a streamable-HTTP session to `url`."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async with (
        create_mcp_http_client(headers=headers or None) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams
