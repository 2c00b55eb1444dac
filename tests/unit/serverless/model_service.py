"""A local HTTP server that answers a model SDK as its service would: one status, body, headers.

The real SDK clients (botocore, ``anthropic``, ``openai``) talk HTTP to it, so the tests see
the exceptions those SDKs really raise. It counts the requests: a refusal must be sent once.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ModelService:
    """Answers every POST with the configured status, JSON body and headers; counts them."""

    def __init__(self) -> None:
        self.status, self.body, self.headers, self.calls = 500, {}, {}, 0
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                service.calls += 1
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                body = json.dumps(service.body).encode()
                self.send_response(service.status)
                for name, value in {"Content-Type": "application/json", **service.headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        """What every request gets from now on."""
        self.status, self.body, self.headers = status, body, dict(headers or {})
