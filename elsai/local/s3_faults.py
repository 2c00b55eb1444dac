"""An HTTP proxy in front of the moto server that makes S3 misbehave the way S3 does.

The agent children talk to S3 through it (``AWS_ENDPOINT_URL_S3``), so their real botocore sees
real failures on the wire and its real retry logic answers them:

- ``slowdown``: 503 SlowDown, the request is not forwarded (nothing applied);
- ``dropped``: the request is forwarded and applied, then the connection closes before any
  response byte (what a lost response looks like: botocore cannot know the write landed).

Each request is faulted with probability ``rate`` (split evenly between the two kinds), from
a seeded generator, and at most ``max_faults`` times in all, so a storm is bounded.
"""

from __future__ import annotations

import contextlib
import http.client
import random
import socket
import threading
import urllib.parse
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "expect", "proxy-connection"}
_SLOWDOWN_BODY = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message>"
    b"<RequestId>elsai-fault</RequestId></Error>"
)


class S3FaultProxy:
    """Context manager: ``endpoint`` is the proxy URL; ``counts`` what it did (thread-safe)."""

    def __init__(
        self, upstream: str, *, rate: float = 0.05, seed: int = 0, max_faults: int = 1000
    ) -> None:
        if not 0 <= rate <= 1:
            raise ValueError(f"fault rate must be within [0, 1], got {rate}")
        parsed = urllib.parse.urlsplit(upstream)
        self.upstream: tuple[str, int] = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self.rate = rate
        self.max_faults = max_faults
        self.counts: Counter[str] = Counter()
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.endpoint: str = ""

    def __enter__(self) -> S3FaultProxy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> str:
        """Listen on a free loopback port; returns the endpoint URL."""
        proxy = self

        class Handler(_ProxyHandler):
            owner = proxy

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"
        return self.endpoint

    def stop(self) -> None:
        """Stop listening (in-flight requests finish on their daemon threads)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def choose(self) -> str:
        """The fate of the next request: ``ok``, ``slowdown`` or ``dropped``."""
        with self._lock:
            self.counts["requests"] += 1
            faults = self.counts["slowdown"] + self.counts["dropped"]
            draw = self._random.random()
            if faults >= self.max_faults or draw >= self.rate:
                return "ok"
            fate = "slowdown" if draw < self.rate / 2 else "dropped"
            self.counts[fate] += 1
            return fate


class _ProxyHandler(BaseHTTPRequestHandler):
    owner: S3FaultProxy
    protocol_version = "HTTP/1.1"  # keep-alive, as botocore's pool expects

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Silent: a storm makes thousands of requests."""

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _forward(self, body: bytes) -> tuple[int, list[tuple[str, str]], bytes]:
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        if body or self.command in ("PUT", "POST"):
            headers["Content-Length"] = str(len(body))
        conn = http.client.HTTPConnection(*self.owner.upstream, timeout=60)
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            response = conn.getresponse()
            data = response.read()
            return response.status, response.getheaders(), data
        finally:
            conn.close()

    def _answer(self, status: int, headers: list[tuple[str, str]], data: bytes) -> None:
        self.send_response(status)
        for name, value in headers:
            if name.lower() not in _HOP_BY_HOP and name.lower() != "content-length":
                self.send_header(name, value)
        if self.command == "HEAD":
            length = next((v for k, v in headers if k.lower() == "content-length"), "0")
            self.send_header("Content-Length", length)
        else:
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _handle(self) -> None:
        try:
            self._proxy()
        except (BrokenPipeError, ConnectionResetError):  # the child was killed mid-request
            self.close_connection = True

    def _proxy(self) -> None:
        body = self._body()
        fate = self.owner.choose()
        if fate == "slowdown":
            headers = [("Content-Type", "application/xml")]
            self._answer(503, headers, _SLOWDOWN_BODY)
            return
        status, headers, data = self._forward(body)
        if fate == "dropped":  # applied upstream; the client never hears back
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        self._answer(status, headers, data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle
