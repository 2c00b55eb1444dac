"""After a failed message write, the same Agent object refuses to go on until rebuilt.

Memory then holds a message the store does not; a second call on that object would store its
prompt in the missing message's slot (an invalid transcript, memory and store diverged). It
raises `AgentOutOfSyncError` before it runs or writes anything; a rebuilt agent loads what is
stored and continues.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.session import AgentOutOfSyncError, FileSessionManager, StorageError
from elsai.session.inspect.check import check_session
from elsai.session.storage import FileStorage
from tests.support.transcripts import assert_valid_transcript


class FailsOnce(FileStorage):
    """A real file store whose create of one key fails once, as a transient outage would."""

    def __init__(self, root: Path, failing_suffix: str) -> None:
        super().__init__(root, fsync=False)
        self.failing_suffix: str | None = failing_suffix

    def create(self, key: str, data: bytes) -> str:
        if self.failing_suffix is not None and key.endswith(self.failing_suffix):
            self.failing_suffix = None
            raise StorageError(f"cannot write {key}: connection reset")
        return super().create(key, data)


def _build(root: Path, replies: list[str], storage: FileStorage | None = None) -> Agent:
    manager = FileSessionManager(session_id="s", storage_dir=str(root))
    if storage is not None:
        manager.storage = storage
    return Agent(
        model=ScriptedModel(replies),
        config=AgentConfig(
            agent_id="a", session_manager=manager, checkpoint=CheckpointConfig(position="both")
        ),
    )


def _stored(root: Path) -> list[str]:
    folder = root / "session_s/agents/agent_a/messages"
    return sorted(p.name for p in folder.iterdir())


def test_the_same_object_refuses_after_a_failed_write_and_a_rebuild_continues(
    tmp_path: Path,
) -> None:
    agent = _build(
        tmp_path, ["first answer", "second answer"], FailsOnce(tmp_path, "message_1.json")
    )
    with pytest.raises(StorageError):
        agent("first question")
    assert len(agent.messages) == 2 and _stored(tmp_path) == ["message_0.json"]

    with pytest.raises(AgentOutOfSyncError, match="Rebuild the agent"):
        agent("second question")
    assert _stored(tmp_path) == ["message_0.json"]  # nothing written past the gap

    rebuilt = _build(tmp_path, ["answered both"])
    assert [m["role"] for m in rebuilt.messages] == ["user"]
    assert str(rebuilt("second question")) == "answered both"
    storage = FileStorage(tmp_path)
    assert check_session(storage, "s") == []
    again = _build(tmp_path, [])
    assert_valid_transcript(again.messages)
    assert again.messages == rebuilt.messages
