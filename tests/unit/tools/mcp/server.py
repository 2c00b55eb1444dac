"""A real MCP server for the tests, written with the `mcp` package's server API.

Run as `python server.py stdio` or `python server.py http <port>`.
Every call is logged as one JSON line to the file named by MCP_TEST_LOG (O_APPEND + fsync, so
a line written right before a kill survives it): tool, phase (start/end), the `_meta`
idempotency key the client sent, the toolUseId and the pid.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image

IDEMPOTENCY_META_KEY = "elsai/idempotency_key"
TOOL_USE_META_KEY = "elsai/tool_use_id"
PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4bb0000000049454e44ae426082"
)

server = MCPServer("elsai-test", instructions="Tools for elsai's MCP tests.")


def _log(ctx: Context | None, tool: str, phase: str, **extra: Any) -> None:
    path = os.environ.get("MCP_TEST_LOG")
    if not path:
        return
    meta = dict(ctx.request_context.meta or {}) if ctx is not None else {}
    line = {
        "tool": tool,
        "phase": phase,
        "key": meta.get(IDEMPOTENCY_META_KEY),
        "tool_use_id": meta.get(TOOL_USE_META_KEY),
        "pid": os.getpid(),
        "t": time.monotonic(),
        **extra,
    }
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(line) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


@server.tool()
def echo(text: str, ctx: Context) -> str:
    """Return the text unchanged."""
    _log(ctx, "echo", "start")
    return text


@server.tool()
def add(a: int, b: int, ctx: Context) -> dict[str, int]:
    """Add two integers; the answer comes back as structured content."""
    _log(ctx, "add", "start")
    return {"sum": a + b}


@server.tool()
def fail(message: str, ctx: Context) -> str:
    """Always fails with the given message (an isError result)."""
    _log(ctx, "fail", "start")
    raise ToolError(message)


@server.tool()
def picture(ctx: Context) -> Image:
    """A 1x1 PNG image."""
    _log(ctx, "picture", "start")
    return Image(data=PNG_1X1, format="png")


@server.tool()
async def slow(seconds: float, tag: str, ctx: Context) -> str:
    """Sleep, logging start and end, so tests can see calls overlap."""
    _log(ctx, "slow", "start", tag=tag)
    await asyncio.sleep(seconds)
    _log(ctx, "slow", "end", tag=tag)
    return f"slept {tag}"


@server.tool()
async def record(note: str, ctx: Context) -> str:
    """Log the call; while the file MCP_TEST_BLOCK exists, hang (a crash test kills us here)."""
    _log(ctx, "record", "start", note=note)
    block = os.environ.get("MCP_TEST_BLOCK")
    while block and os.path.exists(block):
        await asyncio.sleep(0.05)
    _log(ctx, "record", "end", note=note)
    return f"recorded {note}"


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of one HTTP request header (empty over stdio)."""
    request = ctx.request_context.request
    headers = getattr(request, "headers", None) or {}
    return str(headers.get(name, ""))


@server.tool()
def garbage(ctx: Context) -> str:
    """Write a line that is not JSON-RPC into the protocol stream (stdio), then answer."""
    _log(ctx, "garbage", "start")
    os.write(1, b"this line is not JSON-RPC {{{\n")
    return "answered after garbage"


@server.tool()
def die(ctx: Context) -> str:
    """Kill the server process in the middle of the call."""
    _log(ctx, "die", "start")
    os._exit(3)


def main() -> None:
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.settings.log_level = "WARNING"
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))


if __name__ == "__main__":
    main()
