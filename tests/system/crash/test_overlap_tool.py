"""Position `both`, opted in to `overlap_after_model`: the after_model bookmark PUT overlaps the
tools and the write of their result, and a real SIGKILL during that overlap loses nothing.

The child (overlap_child.py) kills itself inside a tool while the after_model bookmark naming
its toolUse is in flight or just landed, or right after that tool's result was stored while the
bookmark is still held in flight. The parent checks the child's write log (fsync'd, in order)
and the store: the toolUse was durable before the tool ran, the stored bookmark counts only
stored messages, and a recovery run ends with a valid transcript in which no tool whose result
was stored ran again. On the defaults, and with overlap off, every after_model bookmark is
written in line, in strict order.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.transcripts import assert_valid_transcript
from tests.system.crash import crash_harness as h
from tests.system.crash.overlap_checks import check_overlapped_write_order, check_write_order, run

IN_TOOL = [
    ("file", "both", "in_flight", 2),
    ("file", "after_model", "landed", 2),
    ("s3", "both", "in_flight", 1),
    ("s3", "both", "landed", 3),
]
AFTER_RESULT = [("file", "both", 1), ("s3", "both", 2), ("s3", "after_model", 3)]


def _args(make_store: Any, tmp_path: Path, backend: str, position: str) -> tuple[Any, dict]:
    store = make_store(backend)
    log = tmp_path / f"writes-{uuid.uuid4().hex[:6]}.log"
    args = {**store.child_args("overlap"), "log": str(log), "position": position}
    return store, {**args, "overlap_after_model": True}  # the opt-in these tests are about


def _position(lines: list[str], started: int) -> str:
    """The position of the bookmark whose write starts at line `started` (logged just before)."""
    marks = [ln for ln in lines[:started] if ln.startswith("bookmark ")]
    return marks[-1].split(" ", 1)[1]


def _recover(store: Any, args: dict[str, Any], env: dict[str, str], saved: set[str]) -> None:
    """Run the job to its end: valid transcript, a stored result never re-run, all tools ran."""
    assert run({**args, "kill_at": 0}, env) == 0
    lines = Path(args["log"]).read_text().splitlines()
    assert lines[-1] == "result end_turn"
    check_overlapped_write_order(lines)
    final = h.Session.parse("overlap", store.snapshot("overlap"), agent_id="worker")
    assert_valid_transcript(final.messages, bookmark=final.bookmark)
    assert h.texts(final.messages[-1]) == ["finished"]
    runs = {f"t{i}": lines.count(f"tool t{i}") for i in range(4)}
    assert all(runs[t] == 1 for t in saved), runs
    assert all(n >= 1 for n in runs.values()), runs


@pytest.mark.parametrize(("backend", "position", "state", "kill_at"), IN_TOOL)
def test_kill_in_a_tool_during_the_after_model_bookmark(
    make_store: Any, make_env: Any, tmp_path: Path, backend: str, position: str, state: str,
    kill_at: int,
) -> None:  # fmt: skip
    store, args = _args(make_store, tmp_path, backend, position)
    env = make_env(backend)
    assert run({**args, "kill_in": "tool", "state": state, "kill_at": kill_at}, env) == -9
    lines = Path(args["log"]).read_text().splitlines()
    assert lines[-1] == f"kill {state}"
    tool = max(i for i, ln in enumerate(lines) if ln.startswith("tool "))
    assert lines[tool] == f"tool t{kill_at - 1}"
    # The toolUse was durable before the tool ran; its bookmark went to the background.
    assert f"end message_{2 * kill_at - 1}.json" in lines[:tool]
    started = max(i for i, ln in enumerate(lines) if ln.startswith("start checkpoint.json"))
    assert lines[started] == "start checkpoint.json elsai-write-behind_0"
    assert _position(lines, started) == "after_model"
    assert ("end checkpoint.json" in lines[started:]) == (state == "landed")
    check_overlapped_write_order(lines)

    killed = h.Session.parse("overlap", store.snapshot("overlap"), agent_id="worker")
    count = len(killed.message_indices)
    assert killed.message_indices == list(range(count))
    assert count == 2 * kill_at and h.uses(killed.messages[-1])  # the toolUse, no result
    stored = killed.bookmark["message_count"] if killed.bookmark else 0
    assert stored <= count  # the bookmark never names a message that is not durable
    if state == "landed":
        assert killed.bookmark is not None
        assert (killed.bookmark["position"], stored) == ("after_model", count)
    else:
        assert stored < count
    saved = {r["toolUseId"] for m in killed.messages for r in h.results(m)}
    _recover(store, args, env, saved)


@pytest.mark.parametrize(("backend", "position", "kill_at"), AFTER_RESULT)
def test_kill_after_the_result_was_stored_with_the_after_model_bookmark_in_flight(
    make_store: Any, make_env: Any, tmp_path: Path, backend: str, position: str, kill_at: int
) -> None:
    store, args = _args(make_store, tmp_path, backend, position)
    env = make_env(backend)
    assert run({**args, "kill_in": "result", "state": "in_flight", "kill_at": kill_at}, env) == -9
    lines = Path(args["log"]).read_text().splitlines()
    result = f"message_{2 * kill_at}.json"
    assert lines[-2:] == [f"end {result}", "kill in_flight"]
    # The result's write passed the after_model bookmark, which never landed.
    started = max(i for i, ln in enumerate(lines) if ln.startswith("start checkpoint.json"))
    assert _position(lines, started) == "after_model"
    assert "end checkpoint.json" not in lines[started:]
    assert f"start {result} MainThread" in lines[started:]
    check_overlapped_write_order(lines)

    killed = h.Session.parse("overlap", store.snapshot("overlap"), agent_id="worker")
    count = len(killed.message_indices)
    assert killed.message_indices == list(range(count)) and count == 2 * kill_at + 1
    assert [r["toolUseId"] for r in h.results(killed.messages[-1])] == [f"t{kill_at - 1}"]
    stored = killed.bookmark["message_count"] if killed.bookmark else 0
    assert stored < count - 1  # the previous bookmark: behind the stored toolUse and result
    saved = {r["toolUseId"] for m in killed.messages for r in h.results(m)}
    assert f"t{kill_at - 1}" in saved
    _recover(store, args, env, saved)


@pytest.mark.parametrize("backend", ["file", "s3"])
@pytest.mark.parametrize("overlap", [False, True], ids=["overlap_off", "defaults"])
def test_in_line_after_model_bookmarks_keep_the_strict_order(
    make_store: Any, make_env: Any, tmp_path: Path, backend: str, overlap: bool
) -> None:
    """Overlap off, every bookmark is written in line; on the defaults every after_model one
    is (only after_tools bookmarks go to the background)."""
    store, args = _args(make_store, tmp_path, backend, "both")
    knobs = {"overlap": overlap, "overlap_after_model": False}
    assert run({**args, **knobs, "kill_at": 0}, make_env(backend)) == 0
    lines = Path(args["log"]).read_text().splitlines()
    assert lines[-1] == "result end_turn"
    # Overlap off, nothing starts while a bookmark is in flight; on the defaults only the
    # model's reply may (after an after_tools bookmark), and no tool does.
    check_write_order(lines, messages_may_pass=overlap)
    starts = [i for i, ln in enumerate(lines) if ln.startswith("start checkpoint.json")]
    in_line = [i for i in starts if lines[i] == "start checkpoint.json MainThread"]
    after_model = [i for i in starts if _position(lines, i) == "after_model"]
    assert after_model and set(after_model) <= set(in_line)
    if overlap:
        assert set(starts) - set(in_line), "on the defaults after_tools bookmarks still overlap"
    else:
        assert in_line == starts
    final = h.Session.parse("overlap", store.snapshot("overlap"), agent_id="worker")
    assert_valid_transcript(final.messages, bookmark=final.bookmark)
