"""The stored encoding of bytes is unambiguous: data shaped like its marker stays data.

Bytes in messages (images, documents) are stored as `{"__bytes__": base64}`. A tool result or
state that happens to look like that marker must round-trip unchanged (never decoded into
bytes, never making the session unreadable), real bytes must still come back as bytes, and a
store written before the escape existed must still load.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager, S3SessionManager
from elsai.session.inspect.check import check_session

FORGED = [
    {"__bytes__": "not base64!"},
    {"__bytes__": "aGVsbG8="},
    {"__elsai_dict__": ["__bytes__", "aGVsbG8="]},
    {"nested": [{"__bytes__": "aGVsbG8="}], "__bytes__": "x"},
]
PNG = b"\x89PNG\r\n\x1a\n\x00raw"


def _manager(backend: str, tmp_path: Path, bucket: str | None) -> Any:
    if backend == "file":
        return FileSessionManager(session_id="s", storage_dir=str(tmp_path))
    return S3SessionManager(session_id="s", bucket=bucket or "", prefix="p/")


@pytest.fixture(params=["file", "s3"])
def backend(request: pytest.FixtureRequest) -> tuple[str, str | None]:
    if request.param == "s3":
        return "s3", request.getfixturevalue("s3_bucket")
    return "file", None


def _agent(manager: Any, responses: list[Any], seen: list[Any]) -> Agent:
    @tool
    def fetch(n: int) -> dict[str, Any]:
        """Return a stored record."""
        return FORGED[n]

    def recording(request: Any) -> str:
        seen.append(json.loads(json.dumps(request.messages, default=repr)))
        return "ok"

    return Agent(
        model=ScriptedModel([*responses, recording]),
        tools=[fetch],
        config=AgentConfig(
            agent_id="a",
            session_manager=manager,
            checkpoint=CheckpointConfig(position="both"),
        ),
    )


def test_marker_shaped_tool_results_and_real_bytes_round_trip(
    backend: tuple[str, str | None], tmp_path: Path
) -> None:
    kind, bucket = backend
    calls = {
        "role": "assistant",
        "content": [
            {"toolUse": {"toolUseId": f"t{n}", "name": "fetch", "input": {"n": n}}}
            for n in range(len(FORGED))
        ],
    }
    image = {"image": {"format": "png", "source": {"bytes": PNG}}}
    first = _agent(_manager(kind, tmp_path, bucket), [calls, "stored"], [])
    first([{"text": "look"}, image])
    expected = list(first.messages)

    seen: list[Any] = []
    manager = _manager(kind, tmp_path, bucket)
    rebuilt = _agent(manager, [], seen)
    assert rebuilt.messages == expected
    results = [b["toolResult"]["content"][0]["json"] for b in rebuilt.messages[2]["content"]]
    assert results == FORGED
    assert rebuilt.messages[0]["content"][1]["image"]["source"]["bytes"] == PNG
    assert rebuilt("again").stop_reason == "end_turn"  # the session stays usable
    assert seen[0][2]["content"][1]["toolResult"]["content"][0]["json"] == FORGED[1]
    assert check_session(manager.storage, "s") == []


def test_a_store_written_in_the_old_encoding_still_loads(tmp_path: Path) -> None:
    messages = tmp_path / "session_s/agents/agent_a/messages"
    messages.mkdir(parents=True)
    old = [
        {"role": "user", "content": [{"image": {"format": "png", "source": {"bytes": {"__bytes__": "aGVsbG8="}}}}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "fetch", "input": {"n": 0}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t", "status": "success", "content": [{"json": {"__bytes__": "not base64!"}}]}}]},
        {"role": "assistant", "content": [{"text": "done"}]},
    ]  # fmt: skip
    for index, message in enumerate(old):
        record = {"message_id": index, "created_at": "2026-01-01T00:00:00Z", "message": message}
        (messages / f"message_{index}.json").write_text(json.dumps(record))
    agent = _agent(FileSessionManager(session_id="s", storage_dir=str(tmp_path)), [], [])
    assert agent.messages[0]["content"][0]["image"]["source"]["bytes"] == b"hello"
    assert agent.messages[2]["content"][0]["toolResult"]["content"][0] == {
        "json": {"__bytes__": "not base64!"}
    }
    assert agent("more").stop_reason == "end_turn"
