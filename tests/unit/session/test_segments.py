"""Message segments, the derived read accelerator beside the message files.

Resume of a whole history reads a bounded number of objects, whatever its length; segments
that are missing, corrupt or stale are ignored (with a warning) and the transcript is read from
the message files, which stay the source of truth. `elsai sessions check` is unaffected.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.conversation.null import NullConversationManager
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager, S3SessionManager
from elsai.session.inspect.check import check_session
from elsai.session.layout import keys
from elsai.session.read.segments import SEGMENT_SIZE, covering, encode
from elsai.session.storage import FileStorage, S3Storage, StorageBackend

SID, AID = "long", "worker"


@tool
def step(n: int) -> str:
    """One step.

    Args:
        n: The step number.
    """
    return f"step {n} done"


def _script(cycles: int) -> list[Any]:
    uses = [
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": f"t{i}", "name": "step", "input": {"n": i}}}],
        }
        for i in range(cycles)
    ]
    return [*uses, "finished"]


def _agent(manager: Any, responses: list[Any], null_cm: bool = True) -> Agent:
    return Agent(
        model=ScriptedModel(responses, record=False),
        tools=[step],
        config=AgentConfig(
            agent_id=AID,
            session_manager=manager,
            checkpoint=CheckpointConfig(position="both"),
            conversation_manager=NullConversationManager() if null_cm else None,
        ),
    )


def _build(root: Path, cycles: int) -> list[Any]:
    agent = _agent(
        FileSessionManager(session_id=SID, storage_dir=str(root), fsync=False), _script(cycles)
    )
    assert agent("go").stop_reason == "end_turn"
    return list(agent.messages)


def _segment_ranges(storage: StorageBackend) -> set[tuple[int, int]]:
    out = set()
    for key in storage.list(keys.segments_prefix(SID, AID)):
        a, b = key.rsplit("/", 1)[1][len("segment_") : -len(".json")].split("_")
        out.add((int(a), int(b)))
    return out


def test_blocks_and_their_merges_are_written_and_check_is_unaffected(tmp_path: Path) -> None:
    messages = _build(tmp_path, 150)  # 302 messages: 4 full blocks before the last message
    storage = FileStorage(tmp_path)
    assert len(messages) == 302
    s = SEGMENT_SIZE
    assert _segment_ranges(storage) == {
        (0, s),
        (s, 2 * s),
        (0, 2 * s),
        (2 * s, 3 * s),
        (3 * s, 4 * s),
        (2 * s, 4 * s),
        (0, 4 * s),
    }
    assert check_session(storage, SID) == []  # segments are not messages, nor unknown files
    assert covering(0, 302) == [(0, 4 * s)]


def test_whole_history_resume_reads_segments_and_equals_the_files(tmp_path: Path) -> None:
    messages = _build(tmp_path, 150)
    resumed = _agent(FileSessionManager(session_id=SID, storage_dir=str(tmp_path)), ["again"])
    assert resumed.messages == messages


def _tamper(storage: FileStorage, span: tuple[int, int], how: str) -> None:
    path = Path(storage.describe(keys.segment_key(SID, AID, *span)))
    if how == "missing":
        path.unlink()
    elif how == "corrupt":
        path.write_bytes(path.read_bytes()[:-40])
    elif how == "stale":  # a consistent segment whose last copy disagrees with the file
        body = json.loads(path.read_bytes())
        records = body["records"]
        records[-1]["message"]["content"] = [{"text": "not what the file says"}]
        path.write_bytes(encode(span[0], records))


@pytest.mark.parametrize("how", ["missing", "corrupt", "stale"])
def test_a_bad_segment_is_ignored_and_the_files_win(
    tmp_path: Path, how: str, caplog: pytest.LogCaptureFixture
) -> None:
    messages = _build(tmp_path, 150)
    storage = FileStorage(tmp_path)
    _tamper(storage, (0, 4 * SEGMENT_SIZE), how)
    with caplog.at_level(logging.WARNING, logger="elsai.session"):
        resumed = _agent(FileSessionManager(session_id=SID, storage_dir=str(tmp_path)), ["again"])
    assert resumed.messages == messages
    warned = [
        r.getMessage() for r in caplog.records if "ignoring message segment" in r.getMessage()
    ]
    assert len(warned) == (0 if how == "missing" else 1)
    assert resumed("more").stop_reason == "end_turn"


def test_a_segment_past_the_stored_count_is_ignored(tmp_path: Path) -> None:
    messages = _build(tmp_path, 60)  # 122 messages: covering() wants [0, 64) only
    storage = FileStorage(tmp_path)
    s = SEGMENT_SIZE
    # Stand-in for a leftover of a longer history: [0, 128) is consistent but reaches too far.
    body = json.loads(Path(storage.describe(keys.segment_key(SID, AID, 0, s))).read_bytes())
    fake = body["records"] + [{**body["records"][-1], "message_id": s + i} for i in range(s)]
    storage.create(keys.segment_key(SID, AID, 0, 2 * s), encode(0, fake))
    Path(storage.describe(keys.segment_key(SID, AID, 0, s))).unlink()
    assert covering(0, 122) == [(0, s)]
    resumed = _agent(FileSessionManager(session_id=SID, storage_dir=str(tmp_path)), ["again"])
    assert resumed.messages == messages


def _upload(root: Path, storage: S3Storage) -> None:
    files = [p for p in root.rglob("*.json") if not any(x.startswith(".") for x in p.parts)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        list(
            pool.map(
                lambda p: storage.create(p.relative_to(root).as_posix(), p.read_bytes()), files
            )
        )


def _count_resume(bucket: str, prefix: str, null_cm: bool) -> tuple[Counter[str], int]:
    manager = S3SessionManager(session_id=SID, bucket=bucket, prefix=prefix)
    counted: Counter[str] = Counter()

    def count(event_name: str, **_: Any) -> None:
        counted[event_name.rsplit(".", 1)[-1]] += 1

    client = manager.storage._client  # type: ignore[attr-defined]
    client.meta.events.register("before-call.s3", count)
    try:
        agent = _agent(manager, [], null_cm=null_cm)
    finally:
        client.meta.events.unregister("before-call.s3", count)
    return counted, len(agent.messages)


def test_resume_requests_do_not_grow_with_history(tmp_path: Path, s3_bucket: str) -> None:
    # A constant (session, agent, bookmark, lease, probes), two per segment (itself and the file
    # of its last message; log2 of the history) and the files after the last segment (< 1 block
    # + 1), or the window: never one GET per message, and no LIST.
    whole_bound = 4 + 3 + 2 * 8 + SEGMENT_SIZE + 1
    window_bound = 4 + 3 + 40
    for cycles in (100, 300):  # 202 and 602 messages
        _build(tmp_path / str(cycles), cycles)
        _upload(tmp_path / str(cycles), S3Storage(s3_bucket, prefix=f"{cycles}/"))
        whole, loaded = _count_resume(s3_bucket, f"{cycles}/", null_cm=True)
        assert loaded == 2 * cycles + 2
        assert set(whole) == {"GetObject"} and whole["GetObject"] <= whole_bound, whole
        window, loaded = _count_resume(s3_bucket, f"{cycles}/", null_cm=False)
        assert loaded == 40
        assert set(window) == {"GetObject"} and window["GetObject"] <= window_bound, window
