"""The local jobs API over HTTP on 127.0.0.1: real requests in, the real handler behind.

`elsai jobs serve` runs a LocalRuntime and this server, so `elsai jobs --local ...` (a
separate process) talks HTTP to it exactly as it talks to API Gateway: the same paths,
bodies and status codes. Each request becomes an API Gateway REST proxy event for the real
`api_handler`. Headers are passed on and the last ones are kept (`recorded_headers`), so a
test can see what a client signed; the signature itself is IAM's job and is not checked here.
Every method reaches the handler (an undeclared one is its JSON 405, an unknown path its JSON
404) and the server's own refusals are JSON too: never the stdlib's HTML error page.
`GET /openapi.json` serves the API's OpenAPI document (`elsai.serverless.contract.openapi`).
The ``X-Elsai-Local-Caller`` header names the request's caller (an IAM user of the local
account, ``local`` without it), so two local callers can try tenant isolation.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from elsai.client import CALLER_HEADER
from elsai.local.api import JobsApiMixin, proxy_reply
from elsai.local.shapes import caller_arn

MAX_BODY_BYTES = 10 * 1024 * 1024  # API Gateway's payload cap
OPENAPI_PATH = "/openapi.json"


class LocalHttpApi:
    """A threaded HTTP server on 127.0.0.1 in front of a runtime's jobs API."""

    def __init__(self, runtime: JobsApiMixin, host: str = "127.0.0.1", port: int = 0) -> None:
        """Bind now (port 0: any free port); `start()` serves in a daemon thread."""
        self.runtime = runtime
        self.recorded_headers: deque[dict[str, str]] = deque(maxlen=100)
        self._server = ThreadingHTTPServer((host, port), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None
        self._document: bytes | None = None

    @property
    def url(self) -> str:
        """Base URL clients use, e.g. ``http://127.0.0.1:8123``."""
        host, port = self._server.server_address[:2]
        host = host.decode() if isinstance(host, bytes) else host
        return f"http://{host}:{port}"

    def start(self) -> LocalHttpApi:
        """Serve in the background; returns self."""
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in this thread until `close()` (or KeyboardInterrupt)."""
        self._server.serve_forever()

    def close(self) -> None:
        """Stop serving and release the port."""
        self._server.shutdown()
        self._server.server_close()

    def handle(
        self, method: str, target: str, headers: dict[str, str], body: str | None
    ) -> tuple[int, dict[str, str], bytes]:
        """One request through the real handler: (status, response headers, body bytes).

        Every method reaches the handler, which answers a route's undeclared method with 405
        and an unknown path with 404, as behind API Gateway; ``GET /openapi.json`` is the
        jobs API's OpenAPI document (`elsai.serverless.contract.openapi`), served here only.
        """
        parts = urlsplit(target)
        if parts.path == OPENAPI_PATH:
            return self._openapi(method)
        query = dict(parse_qsl(parts.query, keep_blank_values=True)) or None
        self.recorded_headers.append(dict(headers))
        forwarded = {
            k: v for k, v in headers.items()
            if k.lower() not in ("host", "content-length", CALLER_HEADER.lower())
        }  # fmt: skip
        named = [v for k, v in headers.items() if k.lower() == CALLER_HEADER.lower()]
        caller = named[-1] if named else None  # the header names the local caller
        if caller is not None:
            try:
                caller_arn(caller)
            except ValueError as exc:
                error = json.dumps({"error": f"{CALLER_HEADER}: {exc}"}).encode()
                return 400, {"Content-Type": "application/json"}, error
        response = self.runtime.api_response(
            method, parts.path, body=body, headers=forwarded, query=query, caller=caller
        )
        reply = proxy_reply(response)
        return reply.status, dict(reply.headers), reply.body

    def _openapi(self, method: str) -> tuple[int, dict[str, str], bytes]:
        json_type = {"Content-Type": "application/json"}
        if method not in ("GET", "HEAD"):
            error = {"error": f"{method} is not allowed here"}
            return 405, {**json_type, "Allow": "GET"}, json.dumps(error).encode()
        if self._document is None:
            from elsai.serverless.contract.openapi import render

            self._document = render().encode()
        return 200, json_type, self._document

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                if size > MAX_BODY_BYTES:
                    self._reply(413, {}, _error_body("request body is larger than 10 MB"))
                    return
                raw = self.rfile.read(size).decode("utf-8", "replace") if size else None
                self._reply(*api.handle(self.command, self.path, dict(self.headers.items()), raw))

            def _reply(self, status: int, headers: dict[str, str], data: bytes) -> None:
                self.send_response(status)
                headers = {"Content-Type": "application/json", **headers}
                for name, value in headers.items():
                    if name.lower() != "content-length":
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def __getattr__(self, name: str) -> Any:
                # Every method (TRACE, PATCH, OPTIONS, ...) goes to the handler, which knows
                # which ones a route has: 405 + Allow, never the stdlib's 501 page.
                if name.startswith("do_"):
                    return self._any
                raise AttributeError(name)

            def send_error(
                self, code: int, message: str | None = None, explain: str | None = None
            ) -> None:
                """The stdlib's own refusals (bad request line, headers too long) as JSON."""
                self.close_connection = True
                text = message or self.responses.get(code, ("error",))[0]
                self._reply(code, {"Connection": "close"}, _error_body(text))

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                """No access log on stderr."""

        return Handler


def _error_body(message: str) -> bytes:
    return json.dumps({"error": message}).encode()
