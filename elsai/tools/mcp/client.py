"""MCPClient: the tools of one Model Context Protocol server, as elsai tools.

The official `mcp` SDK is async and its session (streams, task groups) belongs to one event
loop, while an agent may run in any thread and loop. So each client owns a background loop
thread (`BackgroundLoop`); one task there holds the transport and the session open, and every
call is scheduled onto it with `run_coroutine_threadsafe`.

Failure policy: a server that cannot start raises `MCPConnectionError` at agent build (or
`start()`); once running, nothing raises into the loop. A call that times out, or whose server
dies or answers garbage, becomes an error result the model sees, and the next call reconnects.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from elsai.tools.mcp._loop import BackgroundLoop
from elsai.tools.mcp.errors import MCPCallError, MCPConnectionError
from elsai.tools.mcp.tool import MCPTool

logger: logging.Logger = logging.getLogger(__name__)

DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_STARTUP_TIMEOUT = 30.0


@dataclass(frozen=True)
class StdioTransport:
    """Spawn `command args...` and speak MCP over its stdin/stdout."""

    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None

    def describe(self) -> str:
        """The command line, for error messages."""
        return " ".join([self.command, *self.args])


@dataclass(frozen=True)
class HttpTransport:
    """Connect to a streamable-HTTP MCP endpoint."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """The server URL, for error messages."""
        return self.url


Transport = StdioTransport | HttpTransport


def _import_mcp() -> Any:
    try:
        import mcp
    except ImportError as exc:  # pragma: no cover - the dev extra installs it
        raise ImportError(
            "MCP tools need the optional 'mcp' package: pip install 'elsai[mcp]'"
        ) from exc
    return mcp


class _Connection:
    """One live session, held open by one task on the background loop."""

    def __init__(self) -> None:
        self.session: Any = None
        self.stop = asyncio.Event()
        self.gone = asyncio.Event()
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[None] | None = None


class MCPClient:
    """A tool provider for one MCP server: `Agent(tools=[MCPClient.stdio(...), other])`.

    The agent lists the server's tools when it is built and closes the client if the build
    started it; a client you started yourself (`with client:` or `client.start()`) stays open
    for you to close, so it can be shared by many agents (e.g. across warm Lambda invocations).
    `prefix` is put before every tool name; `allow` / `deny` filter by the server's tool names.
    `call_timeout` bounds each call; `startup_timeout` bounds connecting and listing.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        prefix: str = "",
        allow: Iterable[str] | None = None,
        deny: Iterable[str] | None = None,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    ) -> None:
        if call_timeout <= 0 or startup_timeout <= 0:
            raise ValueError("call_timeout and startup_timeout must be positive seconds")
        self.transport = transport
        self.prefix = prefix
        self.allow: frozenset[str] | None = frozenset(allow) if allow is not None else None
        self.deny: frozenset[str] = frozenset(deny or ())
        self.call_timeout = call_timeout
        self.startup_timeout = startup_timeout
        self._bg: BackgroundLoop | None = None
        self._conn: _Connection | None = None
        self._connect_lock: asyncio.Lock | None = None
        self._lifecycle = threading.RLock()  # start/close from several threads (agents, pools)

    @classmethod
    def stdio(
        cls,
        command: str,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        **options: Any,
    ) -> MCPClient:
        """A server run as a subprocess (`env` is merged over a minimal default environment)."""
        return cls(StdioTransport(command, tuple(args), dict(env) if env else None, cwd), **options)

    @classmethod
    def http(cls, url: str, headers: Mapping[str, str] | None = None, **options: Any) -> MCPClient:
        """A server behind a streamable-HTTP endpoint (e.g. `http://127.0.0.1:8000/mcp`)."""
        return cls(HttpTransport(url, dict(headers or {})), **options)

    # -- lifecycle ---------------------------------------------------------------------

    @property
    def started(self) -> bool:
        """True while connected (or connecting); the background thread exists only then."""
        return self._bg is not None

    def start(self) -> MCPClient:
        """Connect (idempotent). Raises MCPConnectionError if the server cannot be reached."""
        with self._lifecycle:
            if self._bg is None:
                _import_mcp()
                self._bg = BackgroundLoop(f"elsai-mcp {self.transport.describe()}"[:60])
                try:
                    self._bg.run(self._ensure_connected(), None)
                except BaseException:
                    self.close()
                    raise
        return self

    def close(self) -> None:
        """Close the session and stop the server subprocess (stdio); safe to call twice."""
        with self._lifecycle:
            bg, self._bg = self._bg, None
            if bg is None:
                return
            with contextlib.suppress(Exception):
                bg.run(self._disconnect(), 10)
            bg.stop()

    def __enter__(self) -> MCPClient:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def load_tools(self) -> tuple[list[MCPTool], bool]:
        """ToolProvider: the filtered tools, and whether this call started the client."""
        opened = not self.started
        self.start()
        try:
            return self.list_tools(), opened
        except BaseException:
            if opened:
                self.close()
            raise

    def list_tools(self) -> list[MCPTool]:
        """The server's tools (after prefix and filters), as elsai tools bound to this client."""
        self.start()
        assert self._bg is not None
        try:
            listed = self._bg.run(self._list_all(), self.startup_timeout)
        except Exception as exc:
            raise MCPConnectionError(
                f"cannot list the tools of MCP server {self.transport.describe()!r}: {_why(exc)}"
            ) from exc
        return [
            MCPTool(self, t.name, self.prefix + t.name, t.description or "", t.input_schema)
            for t in listed
            if (self.allow is None or t.name in self.allow) and t.name not in self.deny
        ]

    # -- calls -------------------------------------------------------------------------

    async def call_tool_async(
        self, name: str, arguments: dict[str, Any], meta: dict[str, Any]
    ) -> Any:
        """One `tools/call` from any event loop; raises MCPCallError on every failure."""
        bg = self._bg
        if bg is None:
            raise MCPCallError(f"MCP client for {self.transport.describe()!r} is closed")
        # The outer bound is a backstop: the inner call has its own timeout and reconnect bound.
        limit = self.call_timeout + self.startup_timeout + 5
        try:
            return await bg.run_async(self._call(name, arguments, meta), limit)
        except MCPCallError:
            raise
        except Exception as exc:
            raise MCPCallError(f"MCP call {name!r} failed: {_why(exc)}") from exc

    async def _call(self, name: str, arguments: dict[str, Any], meta: dict[str, Any]) -> Any:
        try:
            conn = await self._ensure_connected()
        except MCPConnectionError as exc:
            raise MCPCallError(str(exc)) from exc
        call = asyncio.ensure_future(
            conn.session.call_tool(
                name, arguments, read_timeout_seconds=self.call_timeout, meta=meta
            )
        )
        gone = asyncio.ensure_future(conn.gone.wait())
        try:
            done, _ = await asyncio.wait(
                {call, gone}, timeout=self.call_timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            gone.cancel()
        if call in done:
            try:
                return call.result()
            except Exception as exc:
                if _connection_lost(exc):
                    await self._drop(conn)
                raise MCPCallError(f"MCP call {name!r} failed: {_why(exc)}") from exc
        call.cancel()
        if conn.gone.is_set():
            raise MCPCallError(f"MCP server closed the connection during the call to {name!r}")
        raise MCPCallError(f"MCP call {name!r} timed out after {self.call_timeout:g}s")

    # -- on the background loop ----------------------------------------------------------

    async def _ensure_connected(self) -> _Connection:
        if self._connect_lock is None:
            self._connect_lock = asyncio.Lock()
        async with self._connect_lock:
            conn = self._conn
            if conn is not None and not conn.gone.is_set():
                return conn
            if conn is not None:
                await self._drop(conn)
            conn = _Connection()
            conn.task = asyncio.ensure_future(self._hold(conn))
            try:
                await asyncio.wait_for(asyncio.shield(conn.ready), self.startup_timeout)
            except Exception as exc:
                await self._drop(conn)
                reason = "no answer" if isinstance(exc, asyncio.TimeoutError) else _why(exc)
                raise MCPConnectionError(
                    f"cannot start MCP server {self.transport.describe()!r}: {reason} "
                    f"(startup_timeout={self.startup_timeout:g}s)"
                ) from exc
            self._conn = conn
            return conn

    async def _hold(self, conn: _Connection) -> None:
        """Own the transport and session for their whole life (anyio scopes stay in one task)."""
        mcp = _import_mcp()
        try:
            async with (
                self._open_transport() as streams,
                mcp.ClientSession(streams[0], streams[1]) as session,
            ):
                await session.initialize()
                conn.session = session
                conn.ready.set_result(None)
                await conn.stop.wait()
        except BaseException as exc:
            if not conn.ready.done():
                conn.ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(exc))
            elif not conn.stop.is_set():
                logger.warning("MCP session with %s ended: %s", self.transport.describe(), exc)
            if not isinstance(exc, Exception):
                raise
        finally:
            conn.gone.set()

    def _open_transport(self) -> Any:
        t = self.transport
        if isinstance(t, StdioTransport):
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(
                command=t.command, args=list(t.args), env=dict(t.env) if t.env else None, cwd=t.cwd
            )
            return stdio_client(params, errlog=sys.stderr)
        from elsai.tools.mcp._http import open_http

        return open_http(t.url, dict(t.headers))

    async def _list_all(self) -> list[Any]:
        from mcp.types import PaginatedRequestParams

        conn = await self._ensure_connected()
        tools: list[Any] = []
        cursor: str | None = None
        while True:
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await conn.session.list_tools(params=params)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def _drop(self, conn: _Connection) -> None:
        """Stop one connection's holder task and wait (bounded) for its cleanup."""
        conn.stop.set()
        if self._conn is conn:
            self._conn = None
        task = conn.task
        if task is None or task.done():
            return
        if conn.ready.done() and conn.ready.exception() is None:
            # A live session leaves through `stop`, closing the server politely.
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(task), 5)
        if not task.done():
            task.cancel()  # still connecting (a silent server), or not closing in time
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(task, 5)

    async def _disconnect(self) -> None:
        if self._conn is not None:
            await self._drop(self._conn)

    def __repr__(self) -> str:
        return f"MCPClient({self.transport.describe()!r}, prefix={self.prefix!r})"


def _connection_lost(exc: BaseException) -> bool:
    return "connection closed" in str(exc).lower() or type(exc).__name__ in {
        "ClosedResourceError",
        "BrokenResourceError",
        "EndOfStream",
    }


def _why(exc: BaseException) -> str:
    """A one-line reason, unwrapping exception groups from anyio task groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
