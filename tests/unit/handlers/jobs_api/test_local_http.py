"""The local jobs API server answers like the deployed API, in JSON, whatever it is sent."""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from elsai.local.api import JobsApiMixin
from elsai.local.http import LocalHttpApi
from elsai.serverless.contract.openapi import render
from tests.unit.handlers.jobs_api.helpers import Api


class _Bridge(JobsApiMixin):
    def __init__(self, module: Any) -> None:
        self._api = module


@pytest.fixture
def served(api: Api) -> Iterator[LocalHttpApi]:
    server = LocalHttpApi(_Bridge(api.module)).start()
    try:
        yield server
    finally:
        server.close()


def _send(server: LocalHttpApi, method: str, path: str) -> tuple[int, dict[str, str], bytes]:
    host, port = server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


@pytest.mark.parametrize("method", ["TRACE", "PATCH", "PUT", "OPTIONS", "FOO"])
@pytest.mark.parametrize(
    ("path", "allow"),
    [("/jobs", "GET, POST"), ("/jobs/j-1", "DELETE, GET"), ("/jobs/j-1/events", "GET"),
     ("/jobs/j-1/responses", "POST"), ("/sessions/s-1", "GET")],
)  # fmt: skip
def test_an_undeclared_method_is_a_json_405_with_allow(
    served: LocalHttpApi, method: str, path: str, allow: str
) -> None:
    status, headers, body = _send(served, method, path)
    assert status == 405, body
    assert headers["content-type"] == "application/json" and headers["allow"] == allow
    assert json.loads(body) == {"error": f"{method} is not allowed here"}


@pytest.mark.parametrize("method", ["GET", "TRACE", "POST"])
def test_an_unknown_path_is_a_json_404(served: LocalHttpApi, method: str) -> None:
    status, headers, body = _send(served, method, "/nowhere/at/all")
    assert status == 404 and headers["content-type"] == "application/json"
    assert json.loads(body) == {"error": f"no route {method} /nowhere/at/all"}


def test_head_gets_the_status_and_headers_without_a_body(served: LocalHttpApi) -> None:
    status, headers, body = _send(served, "HEAD", "/jobs")
    assert status == 405 and headers["allow"] == "GET, POST" and body == b""


def test_a_request_the_server_itself_refuses_is_json_too(served: LocalHttpApi) -> None:
    host, port = served.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as raw:
        raw.sendall(b"GET /jobs HTTP/1.1\r\nX-Long: " + b"a" * 70_000 + b"\r\n\r\n")
        answer = b""
        while chunk := raw.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431") and b"Content-Type: application/json" in head
    assert "error" in json.loads(body)


def test_the_openapi_document_is_served(served: LocalHttpApi) -> None:
    status, headers, body = _send(served, "GET", "/openapi.json")
    assert status == 200 and headers["content-type"] == "application/json"
    assert body.decode() == render()
    status, headers, _ = _send(served, "POST", "/openapi.json")
    assert status == 405 and headers["allow"] == "GET"


def test_the_handlers_headers_reach_the_client(served: LocalHttpApi) -> None:
    host, port = served.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    connection.request("POST", "/jobs", body=b'{"prompt": "hi"}')
    response = connection.getresponse()
    job = json.loads(response.read())
    connection.close()
    assert response.status == 202 and response.getheader("Location") == f"/jobs/{job['job_id']}"
    assert response.getheader("Idempotent-Replayed") == "false"
