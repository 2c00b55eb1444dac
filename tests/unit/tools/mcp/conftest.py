"""Fixtures for MCP tests: the test server as a real subprocess, over stdio and over HTTP."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from elsai.tools.mcp import MCPClient

SERVER = str(Path(__file__).with_name("server.py"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for(predicate: Any, what: str, limit: float = 30.0) -> None:
    """Poll until `predicate()` is true; a bound so a broken test fails instead of hanging."""
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def start_http_server(log: Path, port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, SERVER, "http", str(port)],
        env={**os.environ, "MCP_TEST_LOG": str(log)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def listening() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"MCP HTTP test server exited with {proc.returncode}")
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", port)) == 0

    wait_for(listening, "the MCP HTTP test server to listen")
    return proc


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def server_log(tmp_path: Path) -> Path:
    return tmp_path / "server-log.jsonl"


@pytest.fixture
def http_url(server_log: Path) -> Iterator[str]:
    port = free_port()
    proc = start_http_server(server_log, port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc)


def stdio_client(log: Path, **options: Any) -> MCPClient:
    return MCPClient.stdio(
        sys.executable, [SERVER, "stdio"], env={"MCP_TEST_LOG": str(log)}, **options
    )


@pytest.fixture(params=["stdio", "http"])
def make_client(request: pytest.FixtureRequest, server_log: Path) -> Iterator[Any]:
    """A factory of clients of the test server, once per transport; closes what it made."""
    made: list[MCPClient] = []
    url = request.getfixturevalue("http_url") if request.param == "http" else None

    def make(**options: Any) -> MCPClient:
        client = MCPClient.http(url, **options) if url else stdio_client(server_log, **options)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()
