"""A follower rides out a slow or flaky jobs API and never reports a failure it did not see.

A real HTTP server (http.server in a thread) plays the jobs API: it hangs past the client's
timeout, resets the connection or answers 503 a few times before answering. The client's
timeout and the backoff are injected small; no assertion depends on wall-clock time.
"""

from __future__ import annotations

import io
import json
import random
import socket
import struct
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from elsai.cli.jobs.follow import Follower
from elsai.cli.jobs.retry import EXIT_GAVE_UP, RetryPolicy
from elsai.client import ApiError, JobsApi, http_client

JOB = "job-1"
DONE = {"job_id": JOB, "status": "SUCCEEDED", "result": {"text": "Refunded 3 orders."}}
END = {"type": "job_ended", "at": "2100-01-01T00:00:00Z", "status": "SUCCEEDED"}


class FlakyApi:
    """Answers GET /jobs/{id} and /events; each faults[i] spoils the i-th request."""

    def __init__(self, faults: list[str]) -> None:
        self.faults = list(faults)
        self.seen: list[str] = []
        self.release = threading.Event()  # a hung request waits for this (or the test end)
        self.lock = threading.Lock()

    def next_fault(self) -> str:
        with self.lock:
            return self.faults.pop(0) if self.faults else "ok"


def _handler(api: FlakyApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            fault = api.next_fault()
            api.seen.append(fault)
            if fault == "hang":  # longer than the client's timeout
                api.release.wait(30)
                return
            if fault == "reset":  # RST instead of an answer
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
                return
            if fault in ("503", "429"):
                self._send(int(fault), {"error": "busy, retry later"})
                return
            if self.path.startswith(f"/jobs/{JOB}/events"):
                first = "after=" not in self.path
                events = [END] if first else []
                self._send(
                    200, {"job_id": JOB, "status": "RUNNING", "events": events, "cursor": "c1"}
                )
            else:
                self._send(200, DONE)

        def _send(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[tuple[ThreadingHTTPServer, FlakyApi]] = []

    def start(faults: list[str]) -> tuple[JobsApi, FlakyApi]:
        api = FlakyApi(faults)
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append((server, api))
        url = f"http://127.0.0.1:{server.server_address[1]}"
        return http_client(url, sign=False, timeout=0.2), api

    yield start
    for server, api in servers:
        api.release.set()
        server.shutdown()
        server.server_close()


class FakeClock:
    """Time that moves only when the policy sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


def _follow(client: JobsApi, policy: RetryPolicy) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = Follower(
        client, JOB, out, as_json=False, sleep=lambda _: None, retry=policy, err=err
    ).run()
    return code, out.getvalue(), err.getvalue()


def _policy(clock: FakeClock, give_up_after: float = 60.0) -> RetryPolicy:
    return RetryPolicy(
        give_up_after=give_up_after, base=0.5, cap=4.0, sleep=clock.sleep,
        clock=lambda: clock.now, rng=random.Random(7),
    )  # fmt: skip


def test_timeouts_resets_and_503s_are_retried_and_the_job_result_is_shown(serve: Any) -> None:
    client, api = serve(["hang", "reset", "503", "429", "hang", "503"])
    clock = FakeClock()
    code, out, err = _follow(client, _policy(clock))
    assert code == 0, (out, err)
    assert "result: Refunded 3 orders." in out
    assert api.seen[:6] == ["hang", "reset", "503", "429", "hang", "503"]
    assert err.count("retrying in") == 6
    assert "TimeoutError" in err and "HTTP 503" in err
    # All six spoil the first poll, retried: full jitter under a doubling cap, each wait
    # within [0, min(cap, base * 2^n)].
    bounds = [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert len(clock.waits) == 6
    assert all(0 <= w <= b for w, b in zip(clock.waits, bounds, strict=True)), clock.waits


def test_an_api_that_never_recovers_ends_with_its_own_exit_code_and_how_to_look(
    serve: Any,
) -> None:
    client, api = serve(["503"] * 1000)
    clock = FakeClock()
    code, out, err = _follow(client, _policy(clock, give_up_after=20.0))
    assert code == EXIT_GAVE_UP and code != 1
    assert "job may still be running" in err
    assert f"elsai jobs status {JOB}" in err
    assert "■ job" not in out  # no outcome is claimed
    assert clock.now <= 20.0 and len(api.seen) > 3


def test_a_refusal_is_not_retried() -> None:
    clock = FakeClock()

    def failing() -> Any:
        raise ApiError(404, {"error": "no job"})

    with pytest.raises(ApiError):
        _policy(clock).call(failing)
    assert clock.waits == []
