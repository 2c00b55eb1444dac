"""`elsai sessions tail` follows a session while an agent (this test process) writes to it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.unit.cli.helpers import (
    Crash,
    agent,
    call,
    cli_env,
    finish,
    recovered_tools,
    run_clean,
    sessions,
    start_tail,
)


def test_tail_prints_messages_and_bookmarks_as_another_process_writes(tmp_path: Path) -> None:
    run_clean(tmp_path)  # a finished first turn: 6 messages, completed bookmark
    proc = start_tail(
        "clean",
        "--storage-dir",
        str(tmp_path),
        "--last",
        "1",
        "--timeout",
        "30",
        "--until-complete",
    )
    script = [call(("t3", "get_weather", {"city": "Oslo"})), "Oslo is sunny too."]
    agent(tmp_path, "clean", script)("And Oslo?")
    code, out, err = finish(proc)
    assert code == 0, err
    assert "worker … 5 earlier message(s)" in out and "worker [4] user" not in out
    assert "worker [5] assistant" in out  # --last 1: the newest stored message first
    new = out[out.index("worker [6] user") :]
    assert "And Oslo?" in new
    assert '→ get_weather({"city": "Oslo"})  id=t3' in new
    assert "← t3 success: Sunny, 72F in Oslo" in new
    assert "worker [9] assistant" in new and "Oslo is sunny too." in new
    assert (
        new.rstrip()
        .splitlines()[-1]
        .startswith("worker bookmark after_tools · cycle 0 · message_count 10 · completed")
    )


def test_tail_timeout_exits_quietly_and_until_complete_fails_on_timeout(tmp_path: Path) -> None:
    run_clean(tmp_path)
    code, out, _ = finish(start_tail("clean", "--storage-dir", str(tmp_path), "--timeout", "0.3"))
    assert (
        code == 0 and "worker [5] assistant" in out and "worker [0] user" not in out
    )  # default --last 5
    code, _, err = finish(
        start_tail("clean", "--storage-dir", str(tmp_path), "--timeout", "0.3", "--until-complete")
    )
    assert code == 1 and err == "elsai: timed out after 0.3s before a bookmark was completed\n"
    missing = sessions(tmp_path, "tail", "nope", "--timeout", "1")
    assert missing.returncode == 2 and missing.stderr == f"elsai: no session nope in {tmp_path}\n"


def test_tail_json_shows_a_merged_message_being_rewritten(tmp_path: Path) -> None:
    """Resuming after_tools merges the new input into the stored toolResult message, rewriting
    that file: tail reports it as an update, not a new message."""

    def die(_: Any) -> Any:
        raise Crash("process died during the second model call")

    with pytest.raises(Crash):
        agent(tmp_path, "job", [call(("t1", "get_weather", {"city": "Paris"})), die])("Paris?")
    proc = start_tail(
        "job",
        "--storage-dir",
        str(tmp_path),
        "--json",
        "--last",
        "0",
        "--timeout",
        "30",
        "--until-complete",
    )
    result = agent(tmp_path, "job", ["Paris is sunny."], tools=recovered_tools())("continue")
    assert result.resume_position == "after_tools"
    code, out, err = finish(proc)
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    updated = [e for e in events if e["event"] == "message_updated"]
    assert len(updated) == 1 and updated[0]["index"] == 2
    assert updated[0]["message"]["content"][-1] == {"text": "continue"}
    kinds = [(e["event"], e.get("index")) for e in events if e["event"].startswith("message")]
    assert kinds == [("message_updated", 2), ("message", 3)]  # --last 0: nothing stored is shown
    assert events[0] == {"event": "skipped", "agent_id": "worker", "count": 3}
    assert (
        events[-1]["event"] == "bookmark"
        and events[-1]["checkpoint"]["execution_status"] == "completed"
    )


def test_tail_wait_follows_a_session_that_does_not_exist_yet(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "elsai.cli",
            "sessions",
            "tail",
            "later",
            "--storage-dir",
            str(tmp_path),
            "--wait",
            "--interval",
            "0.05",
            "--timeout",
            "30",
            "--until-complete",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    assert proc.stderr is not None
    waiting = proc.stderr.readline()
    assert waiting == f"elsai: waiting for session later in {tmp_path}\n"
    run_clean(tmp_path, "later")
    code, out, err = finish(proc)
    assert code == 0, err
    assert "worker [0] user" in out or "… " in out  # however much of the run it saw live
    assert "message_count 6 · completed" in out


def test_ctrl_c_stops_tail_without_a_traceback(tmp_path: Path) -> None:
    run_clean(tmp_path)
    proc = start_tail("clean", "--storage-dir", str(tmp_path))
    proc.send_signal(signal.SIGINT)
    code, out, err = finish(proc)
    assert code == 130 and err == ""
    assert "worker bookmark after_tools" in out
