"""The local jobs API over HTTP on 127.0.0.1: real requests in, the real handler behind.

`elsai jobs serve` runs a LocalRuntime and this server, so `elsai jobs --local ...` (a
separate process) talks HTTP to it exactly as it talks to API Gateway: the same paths,
bodies and status codes. Each request becomes an API Gateway REST proxy event for the real
`api_handler`. Headers are passed on and the last ones are kept (`recorded_headers`), so a
test can see what a client signed; the signature itself is IAM's job and is not checked here.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from elsai.local.api import JobsApiMixin

MAX_BODY_BYTES = 10 * 1024 * 1024  # API Gateway's payload cap
_ROUTES: list[tuple[re.Pattern[str], str, str | None]] = [
    (re.compile(r"^/jobs/([^/]+)/responses/?$"), "/jobs/{job_id}/responses", "job_id"),
    (re.compile(r"^/jobs/([^/]+)/events/?$"), "/jobs/{job_id}/events", "job_id"),
    (re.compile(r"^/jobs/([^/]+)/?$"), "/jobs/{job_id}", "job_id"),
    (re.compile(r"^/jobs/?$"), "/jobs", None),
    (re.compile(r"^/sessions/([^/]+)/?$"), "/sessions/{session_id}", "session_id"),
]


def resource_of(path: str) -> tuple[str, dict[str, str] | None]:
    """The API Gateway resource a path falls under, and its path parameters."""
    for pattern, resource, name in _ROUTES:
        match = pattern.match(path)
        if match:
            return resource, ({name: unquote(match.group(1))} if name else None)
    return "/{proxy+}", {"proxy": path.lstrip("/")}


class LocalHttpApi:
    """A threaded HTTP server on 127.0.0.1 in front of a runtime's jobs API."""

    def __init__(self, runtime: JobsApiMixin, host: str = "127.0.0.1", port: int = 0) -> None:
        """Bind now (port 0: any free port); `start()` serves in a daemon thread."""
        self.runtime = runtime
        self.recorded_headers: deque[dict[str, str]] = deque(maxlen=100)
        self._server = ThreadingHTTPServer((host, port), self._handler_class())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

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
    ) -> tuple[int, Any]:
        """One request through the real handler: (status, parsed body)."""
        parts = urlsplit(target)
        resource, params = resource_of(parts.path)
        query = dict(parse_qsl(parts.query, keep_blank_values=True)) or None
        self.recorded_headers.append(dict(headers))
        forwarded = {
            k: v for k, v in headers.items() if k.lower() not in ("host", "content-length")
        }
        return self.runtime.api(method, parts.path, resource=resource, body=body, headers=forwarded,
                                path_parameters=params, query=query)  # fmt: skip

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                if size > MAX_BODY_BYTES:
                    self._reply(413, {"error": "request body is larger than 10 MB"})
                    return
                raw = self.rfile.read(size).decode("utf-8", "replace") if size else None
                status, body = api.handle(self.command, self.path, dict(self.headers.items()), raw)
                self._reply(status, body)

            def _reply(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = _any  # noqa: N815

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                """No access log on stderr."""

        return Handler
