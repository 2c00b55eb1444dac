"""The console's HTTP server: the standard library's ThreadingHTTPServer on 127.0.0.1 only.

Safety, every request: a Host header other than this server's loopback names is refused (DNS
rebinding); every answer carries a strict Content-Security-Policy (no inline script, nothing
from elsewhere) and no-sniff/no-frame headers; a POST needs this run's token, a same-origin
Origin when the browser sends one, and a form body of bounded size (no CSRF from other pages).
"""

from __future__ import annotations

import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from elsai.console.app import ConsoleApp, Response
from elsai.console.sources import Sources

HOST = "127.0.0.1"
MAX_FORM_BYTES = 64 * 1024
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
_SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # "no-referrer" would make a form's Origin "null"
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


class ConsoleServer:
    """`elsai console`'s server: `url` once bound; `serve_forever` or `start` (a thread)."""

    def __init__(self, sources: Sources, port: int = 0, token: str | None = None) -> None:
        self.app: ConsoleApp = ConsoleApp(sources, token or secrets.token_urlsafe(32))
        self.httpd: ThreadingHTTPServer = ThreadingHTTPServer((HOST, port), self._handler_class())
        self.httpd.daemon_threads = True
        self.port: int = int(self.httpd.server_address[1])
        self._allowed_hosts: set[str] = {f"{HOST}:{self.port}", f"localhost:{self.port}"}
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Where the console is served."""
        return f"http://{HOST}:{self.port}/"

    def start(self) -> ConsoleServer:
        """Serve in a background thread (tests)."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve until interrupted."""
        self.httpd.serve_forever()

    def close(self) -> None:
        """Stop serving and free the port."""
        if self._thread is not None:
            self.httpd.shutdown()
            self._thread.join(timeout=10)
        self.httpd.server_close()

    def respond(self, method: str, target: str, headers: Any, body: bytes | None) -> Response:
        """The answer to one request, after the safety checks."""
        if headers.get("Host", "") not in self._allowed_hosts:
            return Response(
                421, b"wrong Host header: this console serves only its loopback address"
            )
        split = urlsplit(target)
        parts = [unquote(p) for p in split.path.split("/") if p]
        if method == "GET":
            return self.app.get(parts, dict(parse_qsl(split.query)))
        origin = headers.get("Origin")
        if origin is not None and origin.rstrip("/") not in {
            f"http://{h}" for h in self._allowed_hosts
        }:
            return Response(403, b"cross-origin request refused")
        kind = (headers.get("Content-Type") or "").split(";")[0].strip()
        if kind != "application/x-www-form-urlencoded" or body is None:
            return Response(415, b"a form post is expected")
        try:
            form = dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True, max_num_fields=300))
        except (UnicodeDecodeError, ValueError):
            return Response(400, b"malformed form")
        return self.app.post(parts, form)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "elsai-console"
            sys_version = ""

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                self._reply(server.respond("GET", self.path, self.headers, None))

            def do_POST(self) -> None:  # noqa: N802
                try:
                    length = int(self.headers.get("Content-Length") or "0")
                except ValueError:
                    length = -1
                if not 0 <= length <= MAX_FORM_BYTES:
                    self._reply(Response(413, b"the form is too large"))
                    return
                body = self.rfile.read(length)
                self._reply(server.respond("POST", self.path, self.headers, body))

            def _reply(self, response: Response) -> None:
                headers = {"Content-Type": "text/plain; charset=utf-8", **response.headers}
                self.send_response(response.status)
                for name, value in {**headers, **_SECURITY_HEADERS}.items():
                    if name == "Cache-Control" and name in response.headers:
                        value = response.headers[name]
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(response.body)))
                self.end_headers()
                self.wfile.write(response.body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # quiet: the terminal shows the URL, not every request

        return Handler
