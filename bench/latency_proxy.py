"""A fixed-latency HTTP proxy in front of the moto server, shared by both SDKs.

    python -m bench.latency_proxy --upstream http://127.0.0.1:PORT --port P --delay-ms 20

Every request waits `delay-ms` before it is forwarded (method, path, headers and body as
sent), then the upstream answer is passed back as is: one round trip to a nearby S3 costs
about that much, where loopback moto answers in a few milliseconds. It runs in its own
process so its threads never compete with the agents for the benchmark's GIL.
"""

from __future__ import annotations

import argparse
import http.client
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

_local = threading.local()
_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "upgrade"}


def make_handler(upstream: str, delay_s: float) -> type[BaseHTTPRequestHandler]:
    target = urlsplit(upstream)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return None

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            time.sleep(delay_s)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
            for attempt in range(2):
                conn = getattr(_local, "conn", None)
                if conn is None:
                    conn = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
                    _local.conn = conn
                try:
                    conn.request(self.command, self.path, body=body, headers=headers)
                    response = conn.getresponse()
                    data = response.read()
                    break
                except (OSError, http.client.HTTPException):
                    conn.close()
                    _local.conn = None
                    if attempt:
                        raise
            self.send_response(response.status)
            for key, value in response.getheaders():
                if key.lower() not in _HOP and key.lower() != "content-length":
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--delay-ms", type=float, default=20.0)
    args = parser.parse_args()
    server = ThreadingHTTPServer(
        ("127.0.0.1", args.port), make_handler(args.upstream, args.delay_ms / 1000)
    )
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
