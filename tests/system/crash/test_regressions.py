"""Regression tests for SDK bugs the crash matrix found, each a minimal real-process reproduction.

1. A crash after the final answer is stored but before the bookmark is finalized: recovery
   must finalize it as completed.
2. A prompt merged into a stored user message must stay exactly-once by invocation id.
3. A should_stop pause must never strand a pending toolUse that no bookmark covers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.transcripts import assert_valid_transcript
from tests.system.crash import child_agent as child
from tests.system.crash import crash_harness as h


def _run(
    store: h.Store, env: dict[str, str], tmp: Path, session_id: str, name: str, **extra
) -> h.ChildRun:
    args = {
        **store.child_args(session_id),
        "session_id": session_id,
        "agent_id": h.AGENT_ID,
        "position": extra.pop("position", "both"),
        "ledger": str(tmp / "ledger.txt"),
        "writes": str(tmp / f"writes-{name}.log"),
        "progress": str(tmp / f"progress-{name}.log"),
        **extra,
    }
    return h.run_child(args, env)


@pytest.mark.parametrize("position", ["both"])
def test_recovery_finalizes_bookmark_after_final_message(
    position: str, make_store, make_env, tmp_path: Path
) -> None:
    matrix = h.Matrix(make_store("file"), position, tmp_path / "work", make_env("file"))
    calibration = matrix.calibrate()
    final_create = max(
        (w for w in calibration.writes if "/messages/" in w["key"] and w["op"] == "create"),
        key=lambda w: w["n"],
    )
    point = h.CrashPoint(
        "write", k=final_create["n"], when="after", label=h.describe_write(final_create)
    )
    result = matrix.run_point(point, calibration)
    assert result.finalize_window
    assert not result.violations, h.format_failures([result])


@pytest.mark.parametrize("backend", ["file", "s3"])
def test_merged_prompt_is_exactly_once(backend: str, make_store, make_env, tmp_path: Path) -> None:
    store, env = make_store(backend), make_env(backend)
    session_id = f"merge-{backend}"
    second = {"prompt": "Actually, count the spare parts too.", "invocation_id": "inv-B"}
    # 1. The first invocation dies right after its prompt is stored (before the model answers).
    first = _run(
        store,
        env,
        tmp_path,
        session_id,
        "first",
        steps=[1],
        crash={"kind": "write", "k": 3, "when": "after"},
    )
    assert first.returncode == child.CRASH_EXIT, first.stderr
    # 2. The caller gives up on it and sends a new invocation; the new text is merged into the
    #    stored user message (roles must alternate) and the process dies right after that write.
    merged = _run(
        store,
        env,
        tmp_path,
        session_id,
        "merged",
        steps=[second],
        crash={"kind": "write", "k": 1, "when": "after"},
    )
    assert merged.returncode == child.CRASH_EXIT, merged.stderr
    writes = h.read_jsonl(tmp_path / "writes-merged.log")
    assert writes[0]["op"] == "replace" and writes[0]["key"].endswith("message_0.json"), writes
    # 3. The caller retries the same invocation id: the prompt must not be stored twice.
    retry = _run(store, env, tmp_path, session_id, "retry", steps=[second])
    assert retry.returncode == 0, retry.stderr
    final = h.Session.parse(session_id, store.snapshot(session_id))
    assert_valid_transcript(final.messages)
    user_texts = [t for m in final.messages if m["role"] == "user" for t in h.texts(m)]
    assert user_texts.count(second["prompt"]) == 1, json.dumps(final.messages[0], indent=1)


@pytest.mark.parametrize(
    "position",
    [
        "after_tools",
        "after_model",
        "both",
    ],
)
def test_pause_at_after_model_runs_pending_tools_next_slice(
    position: str, make_store, make_env, tmp_path: Path
) -> None:
    """Slice 1 asks to pause (should_stop) right after the model asked for t0; slice 2
    (`agent()`, another process) must find t0 run, never reported interrupted."""
    store, env = make_store("file"), make_env("file")
    session_id = f"pause-{position}"
    slice1 = _run(
        store,
        env,
        tmp_path,
        session_id,
        "slice1",
        position=position,
        steps=[{"prompt": child.PROMPT, "invocation_id": "inv-1", "pause": "first_after_model"}],
    )
    assert slice1.returncode == 0, slice1.stderr
    ended = [e for e in h.read_jsonl(tmp_path / "progress-slice1.log") if e["event"] == "end"]
    # Without an after_model bookmark that boundary is not a safe place to stop: the loop
    # declines the pause there (a deadline predicate stays true and stops at after_tools).
    expected = "end_turn" if position == "after_tools" else "paused"
    assert ended and ended[0]["stop_reason"] == expected
    slice2 = _run(
        store, env, tmp_path, session_id, "slice2", position=position, steps=[{"prompt": None}]
    )
    assert slice2.returncode == 0, slice2.stderr
    final = h.Session.parse(session_id, store.snapshot(session_id))
    assert_valid_transcript(final.messages)
    t0 = next(r for m in final.messages for r in h.results(m) if r["toolUseId"] == "t0")
    ledger = [e.event for e in h.read_ledger(tmp_path / "ledger.txt") if e.tool_use_id == "t0"]
    assert ledger == ["start", "done"] and t0["status"] == "success", (ledger, t0)
