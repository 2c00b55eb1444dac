"""The after_tools bookmark PUT overlaps the model call, and a real SIGKILL
during that overlap never leaves a bookmark naming a message that is not durable.

The child (overlap_child.py) kills itself with SIGKILL inside the model call, either while the
bookmark write is still in flight or just after it landed. The parent then checks the store
and the child's write log (fsync'd lines, in order): the bookmark was written from the
background thread while the model ran, nothing but the reply's message write started before
it landed, no tool ran under it, the stored
bookmark counts only stored messages, and a recovery run finishes the job with a valid
transcript and no completed tool run twice.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.transcripts import assert_valid_transcript
from tests.system.crash import crash_harness as h
from tests.system.crash.overlap_checks import check_write_order, run

CASES = [
    ("file", "both", "in_flight", 2),
    ("file", "after_tools", "landed", 3),
    ("file", "after_tools", "in_flight", 4),
    ("s3", "both", "in_flight", 3),
    ("s3", "after_tools", "in_flight", 2),
    ("s3", "both", "landed", 2),
]


@pytest.mark.parametrize(("backend", "position", "state", "kill_at"), CASES)
def test_kill_during_overlapped_bookmark(
    make_store: Any,
    make_env: Any,
    tmp_path: Path,
    backend: str,
    position: str,
    state: str,
    kill_at: int,
) -> None:
    store = make_store(backend)
    env = make_env(backend)
    log = tmp_path / f"writes-{uuid.uuid4().hex[:6]}.log"
    args = {**store.child_args("overlap"), "log": str(log), "position": position, "state": state}
    assert run({**args, "kill_at": kill_at}, env) == -9
    lines = log.read_text().splitlines()
    # The kill came from inside the model call, with the bookmark write (started from the
    # background thread) still in flight, or just after it landed.
    assert lines[-1] == f"kill {state}"
    model = max(i for i, ln in enumerate(lines) if ln.startswith("model "))
    assert model > max(i for i, ln in enumerate(lines) if ln.startswith("end message_"))
    started = max(i for i, ln in enumerate(lines) if ln.startswith("start checkpoint.json"))
    assert lines[started] == "start checkpoint.json elsai-write-behind_0"
    ended = "end checkpoint.json" in lines[started:]
    assert ended == (state == "landed")
    check_write_order(lines)  # on the defaults only after_tools bookmarks overlap

    killed = h.Session.parse("overlap", store.snapshot("overlap"), agent_id="worker")
    assert killed.message_indices == list(range(len(killed.message_indices)))
    # The bookmark stored (if any: the first one may be the one killed in flight) counts only
    # messages that are durable.
    stored = killed.bookmark["message_count"] if killed.bookmark else 0
    assert stored <= len(killed.message_indices)
    if state == "landed":
        assert killed.bookmark is not None
        assert killed.bookmark["position"] == "after_tools"
        assert killed.bookmark["message_count"] == len(killed.message_indices)
    saved = {r["toolUseId"] for m in killed.messages for r in h.results(m)}

    assert run({**args, "kill_at": 0}, env) == 0
    lines = log.read_text().splitlines()
    assert lines[-1] == "result end_turn"
    check_write_order(lines)  # on the defaults only after_tools bookmarks overlap
    final = h.Session.parse("overlap", store.snapshot("overlap"), agent_id="worker")
    assert_valid_transcript(final.messages, bookmark=final.bookmark)
    assert h.texts(final.messages[-1]) == ["finished"]
    runs = {f"t{i}": lines.count(f"tool t{i}") for i in range(4)}
    assert all(runs[t] == 1 for t in saved), runs  # a saved result is never re-run
    assert all(n >= 1 for n in runs.values()), runs
