"""Crashes around a real model stream: the agent process SIGKILLed mid-stream, the server too.

Each kill hits a real process while the HTTP stream from llama.cpp is open. Afterwards the
session holds only what was durable (never half a reply), and a rebuilt agent with the same
ids finishes the job with a valid transcript.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.errors import ModelError
from elsai.loop.events import TextDeltaEvent
from elsai.session import FileSessionManager
from tests.support.transcripts import assert_valid_transcript
from tests.system.real_model.agent_setup import AGENT_ID, PROMPT, SESSION_ID, build_agent
from tests.system.real_model.helpers import real_model, stored
from tests.system.real_model.llama_server import LlamaServer, free_port

ROOT = Path(__file__).resolve().parents[3]
WAIT_S = 180.0


def wait_for(path: Path, child: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not path.exists():
        if child.poll() is not None:
            out = child.stdout.read().decode() if child.stdout else ""
            pytest.fail(f"child exited {child.returncode} before streaming:\n{out}")
        if time.monotonic() > deadline:
            child.kill()
            pytest.fail("child did not start streaming")
        time.sleep(0.05)


def test_agent_sigkilled_mid_stream_then_rebuilt_agent_resumes(
    server_url: str, gguf: Path, tmp_path: Path
) -> None:
    sessions, marker, tool_log = tmp_path / "sessions", tmp_path / "marker", tmp_path / "tools"
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.system.real_model.child_agent",
            server_url,
            str(gguf),
            str(sessions),
            str(marker),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    wait_for(marker, child)
    child.send_signal(signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL
    # Killed inside the first model call: only the user's input is durable.
    assert [m["role"] for m in stored(sessions, SESSION_ID, AGENT_ID)] == ["user"]

    agent = build_agent(server_url, str(gguf), str(sessions), str(tool_log))
    result = agent(PROMPT, invocation_id="job-1")

    assert result.stop_reason == "end_turn"
    assert len(tool_log.read_text().splitlines()) == 1, "the tool ran once, after the rebuild"
    messages = stored(sessions, SESSION_ID, AGENT_ID)
    assert messages == agent.messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert_valid_transcript(messages)


def test_server_killed_mid_stream_is_a_clear_error_and_nothing_half_written(
    server_url: str, gguf: Path, tmp_path: Path
) -> None:
    def build(base_url: str) -> Agent:
        config = AgentConfig(
            agent_id="writer", session_manager=FileSessionManager(SESSION_ID, str(tmp_path))
        )
        model = real_model(base_url, gguf, params={"max_tokens": 400}, max_retries=2)
        return Agent(model=model, config=config)

    prompt = "Tell a long story about a river in Paris."
    server = LlamaServer(gguf, log=tmp_path / "server.log").start()
    try:
        agent = build(server.base_url)
        seen: list[str] = []

        async def run() -> None:
            async for event in agent.stream_async(prompt, invocation_id="story-1"):
                if isinstance(event, TextDeltaEvent):
                    seen.append(event.text)
                    if len(seen) == 1:
                        server.kill()

        with pytest.raises(ModelError, match="server call failed mid-reply: Connection") as info:
            asyncio.run(run())
    finally:
        server.stop()
    assert seen, "the stream had started"
    print(f"server killed mid-stream: {info.value}")
    assert [m["role"] for m in stored(tmp_path, SESSION_ID, "writer")] == ["user"]
    assert [m["role"] for m in agent.messages] == ["user"]
    # Another server, a rebuilt agent, the same invocation id: the answer is written once.
    result = build(server_url)(prompt, invocation_id="story-1")
    messages = stored(tmp_path, SESSION_ID, "writer")
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[-1] == result.message
    assert_valid_transcript(messages)


def test_server_down_is_retried_with_backoff_then_a_clear_error(gguf: Path, tmp_path: Path) -> None:
    delays: list[float] = []

    async def no_wait(delay: float) -> None:
        delays.append(delay)

    model = real_model(f"http://127.0.0.1:{free_port()}/v1", gguf, max_retries=2)
    model.retry.sleep = no_wait
    config = AgentConfig(
        agent_id="writer", session_manager=FileSessionManager(SESSION_ID, str(tmp_path))
    )
    agent = Agent(model=model, config=config)
    with pytest.raises(ModelError, match="OpenAI-compatible server call failed: Connection error"):
        agent("hello")
    assert len(delays) == 2
    assert [m["role"] for m in stored(tmp_path, SESSION_ID, "writer")] == ["user"]
