"""The overlapped after_tools bookmark write is never lost, nor its error.

A failing background bookmark write fails the invocation at the next boundary (the model's
reply may have been written alongside it; no tool runs and nothing else is written after it),
or at the end of the invocation when nothing follows; the lease is released anyway.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager
from elsai.session.storage.base import StorageBackend, StorageError, StoredObject

RAN: list[int] = []


@tool
def step(n: int) -> str:
    """One step.

    Args:
        n: The step number.
    """
    RAN.append(n)
    return f"step {n} done"


class FailingBookmarks(StorageBackend):
    """Delegates; the n-th checkpoint.json write raises, and every write is recorded."""

    def __init__(self, inner: StorageBackend, fail_at: int) -> None:
        self.inner, self.fail_at, self.bookmarks = inner, fail_at, 0
        self.writes: list[str] = []

    def read(self, key: str) -> StoredObject | None:
        return self.inner.read(key)

    def list(self, prefix: str) -> list[str]:
        return self.inner.list(prefix)

    def create(self, key: str, data: bytes) -> str:
        self.writes.append(key.rsplit("/", 1)[1])
        return self.inner.create(key, data)

    def replace(self, key: str, data: bytes, *, expected_version: str | None) -> str:
        name = key.rsplit("/", 1)[1]
        if name == "checkpoint.json":
            self.bookmarks += 1
            if self.bookmarks == self.fail_at:
                raise StorageError("injected: the bookmark PUT failed")
        self.writes.append(name)
        return self.inner.replace(key, data, expected_version=expected_version)


def _use(i: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": f"t{i}", "name": "step", "input": {"n": i}}}],
    }


def _agent(
    tmp_path: Path, fail_at: int, position: str = "after_tools", overlap_after_model: bool = False
) -> tuple[Agent, FailingBookmarks]:
    manager = FileSessionManager(session_id="s", storage_dir=str(tmp_path))
    manager.overlap_after_model = overlap_after_model
    storage = manager.storage = FailingBookmarks(manager.storage, fail_at)
    agent = Agent(
        model=ScriptedModel([_use(0), _use(1), "done"]),
        tools=[step],
        config=AgentConfig(
            agent_id="a",
            session_manager=manager,
            checkpoint=CheckpointConfig(position=position),  # type: ignore[arg-type]
        ),
    )
    return agent, storage


def test_a_failed_background_bookmark_fails_the_next_boundary(tmp_path: Path) -> None:
    agent, storage = _agent(tmp_path, fail_at=1)  # the first after_tools bookmark
    RAN.clear()
    with pytest.raises(StorageError, match="injected"):
        agent("go")
    # prompt, toolUse, toolResult, and the reply written alongside the failing bookmark; its
    # tool never ran (the after_model boundary raised first) and nothing followed.
    written = [w for w in storage.writes if w != "lease.json"]  # released at the end anyway
    assert written[-4:] == [f"message_{i}.json" for i in range(4)]
    assert RAN == [0]
    assert not (tmp_path / "session_s/agents/agent_a/checkpoint.json").exists()
    storage.fail_at = 0
    assert agent("go on").stop_reason == "end_turn"
    assert RAN == [0]  # the orphan toolUse is answered, never run


def test_the_reply_is_written_while_the_after_tools_bookmark_is_in_flight(tmp_path: Path) -> None:
    """The reply's message write does not wait for the pending bookmark (it names only stored
    messages); the next boundary does."""
    agent, storage = _agent(tmp_path, fail_at=0)
    gate, order = threading.Event(), []
    inner_replace = storage.replace

    def slow_bookmark(key: str, data: bytes, *, expected_version: str | None) -> str:
        if key.endswith("checkpoint.json") and storage.bookmarks == 0:
            assert gate.wait(10), "the reply was not written while the bookmark was held"
            order.append("bookmark")
        return inner_replace(key, data, expected_version=expected_version)

    def create(key: str, data: bytes) -> str:
        out = FailingBookmarks.create(storage, key, data)
        if key.endswith("message_3.json"):
            order.append("reply")
            gate.set()
        return out

    storage.replace = slow_bookmark  # type: ignore[method-assign]
    storage.create = create  # type: ignore[method-assign]
    assert agent("go").stop_reason == "end_turn"
    assert order == ["reply", "bookmark"]


def test_a_failed_background_bookmark_fails_a_paused_invocation_at_its_end(tmp_path: Path) -> None:
    agent, storage = _agent(tmp_path, fail_at=1)
    with pytest.raises(StorageError, match="injected"):
        agent("go", should_stop=lambda: True)  # pauses right after the first after_tools
    assert [w for w in storage.writes if w.startswith("message_")] == [
        "message_0.json",
        "message_1.json",
        "message_2.json",
    ]
    # The lease was released although the bookmark failed: the same agent can run again.
    storage.fail_at = 0
    assert agent("go on").stop_reason == "end_turn"


@pytest.mark.parametrize(("overlap_after_model", "stored"), [(True, 3), (False, 2)])
def test_a_failed_after_model_bookmark(
    tmp_path: Path, overlap_after_model: bool, stored: int
) -> None:
    """Overlapped, the tool ran and its result (a message the bookmark does not name) was
    stored before the failure was raised at the after_tools boundary; in line, the loop stops
    before the tool. Either way nothing is written once the failure is known."""
    agent, storage = _agent(tmp_path, 1, "both", overlap_after_model)
    with pytest.raises(StorageError, match="injected"):
        agent("go")
    written = [w for w in storage.writes if w != "lease.json"]  # released at the end anyway
    assert written[-stored:] == [f"message_{i}.json" for i in range(stored)]
    assert len([w for w in written if w.startswith("message_")]) == stored
    assert not (tmp_path / "session_s/agents/agent_a/checkpoint.json").exists()
    storage.fail_at = 0
    assert agent("go on").stop_reason == "end_turn"
