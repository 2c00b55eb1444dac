"""MCP client lifecycle: clear errors for servers that cannot start, and who closes what."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from elsai import Agent
from elsai.models import ScriptedModel
from elsai.tools.mcp import MCPClient, MCPConnectionError
from tests.unit.tools.mcp.conftest import read_log, stdio_client, wait_for


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is gone once its state says so.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def server_pid(client: MCPClient, log: Path) -> int:
    """Make one call so the server logs its pid."""
    [echo] = [t for t in client.list_tools() if t.name == "echo"]
    with Agent(model=ScriptedModel([_echo_call(), "ok"]), tools=[echo]) as agent:
        agent("go")
    return int(read_log(log)[-1]["pid"])


def _echo_call() -> dict[str, object]:
    use = {"toolUseId": "p", "name": "echo", "input": {"text": "pid"}}
    return {"role": "assistant", "content": [{"toolUse": use}]}


def test_a_missing_command_fails_the_agent_build_clearly() -> None:
    with pytest.raises(MCPConnectionError, match="cannot start MCP server '/nonexistent/mcp'"):
        Agent(model=ScriptedModel([]), tools=[MCPClient.stdio("/nonexistent/mcp")])


def test_a_process_that_does_not_speak_mcp_fails_within_the_startup_timeout() -> None:
    silent = MCPClient.stdio(
        sys.executable,
        ["-c", "import time; print('hello, I am not MCP', flush=True); time.sleep(120)"],
        startup_timeout=1.0,
    )
    with pytest.raises(MCPConnectionError, match=r"no answer \(startup_timeout=1s\)"):
        Agent(model=ScriptedModel([]), tools=[silent])
    assert not silent.started


def test_nothing_listening_on_the_http_port_fails_clearly() -> None:
    client = MCPClient.http("http://127.0.0.1:9/mcp", startup_timeout=5)
    with pytest.raises(MCPConnectionError, match="ConnectError"):
        client.start()


@pytest.fixture
def garbage_http() -> Iterator[str]:
    class Garbage(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b"<html>this is not JSON-RPC")

        do_GET = do_POST

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Garbage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()


def test_an_http_server_answering_garbage_fails_clearly(garbage_http: str) -> None:
    with pytest.raises(MCPConnectionError, match="Failed to parse JSON"):
        Agent(model=ScriptedModel([]), tools=[MCPClient.http(garbage_http, startup_timeout=5)])


def test_the_agent_closes_the_client_its_build_started(server_log: Path) -> None:
    client = stdio_client(server_log)
    agent = Agent(model=ScriptedModel([]), tools=[client])
    assert client.started
    pid = server_pid(client, server_log)
    agent.close()
    assert not client.started
    wait_for(lambda: not alive(pid), "the stdio server process to exit")
    agent.close()  # idempotent


def test_a_client_started_by_the_caller_stays_open_for_the_caller(server_log: Path) -> None:
    with stdio_client(server_log) as client:
        for _ in range(2):  # e.g. two warm invocations building an agent each
            with Agent(model=ScriptedModel(["hi"]), tools=[client]) as agent:
                agent("go")
            assert client.started
        pid = server_pid(client, server_log)
        assert alive(pid)
    assert not client.started
    wait_for(lambda: not alive(pid), "the stdio server process to exit")


def test_a_failed_build_closes_what_it_opened(server_log: Path) -> None:
    client = stdio_client(server_log)

    def echo(text: str) -> str:
        """Clashes with the server's echo."""
        return text

    with pytest.raises(ValueError, match="duplicate tool name 'echo'"):
        Agent(model=ScriptedModel([]), tools=[client, echo])
    assert not client.started


def test_import_elsai_imports_neither_mcp_nor_opentelemetry() -> None:
    code = (
        "import sys, elsai, elsai.agent, elsai.tools, elsai.tools.mcp, elsai.telemetry\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'opentelemetry'))\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
