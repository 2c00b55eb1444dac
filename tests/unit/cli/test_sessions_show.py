"""`elsai sessions ls` and `show` over sessions written by real agent runs, run as a user would."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit.cli.helpers import (
    ANSI,
    agent,
    agent_dir,
    call,
    cli_env,
    edit_json,
    elsai,
    recovered_tools,
    run_clean,
    run_crashed,
    run_interrupted,
    sessions,
)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """Three sessions, oldest first: clean (completed), crashed (mid-tool), hitl (interrupt)."""
    root = tmp_path / "sessions"
    run_clean(root)
    run_crashed(root)
    run_interrupted(root)
    for age, session in ((300, "clean"), (200, "crashed"), (100, "hitl")):
        for path in (root / f"session_{session}").rglob("*"):
            os.utime(path, (path.stat().st_atime, path.stat().st_mtime - age))
    return root


def test_ls_lists_sessions_newest_first_with_counts_and_bookmarks(store: Path) -> None:
    out = sessions(store, "ls")
    assert out.returncode == 0, out.stderr
    header, *rows = out.stdout.splitlines()
    assert header.split() == ["SESSION", "AGENT", "MSGS", "BOOKMARK", "UPDATED", "NEXT", "INVOKE"]
    assert [r.split()[0] for r in rows] == ["hitl", "crashed", "clean"]
    hitl, crashed, clean = (r.split() for r in rows)
    assert crashed[1:4] == ["worker", "2", "after_model#0"] and "active" in crashed
    assert "resume after_model" in rows[1]
    assert clean[1:4] == ["worker", "6", "after_tools#1"] and "completed" in clean
    assert "awaiting 1 interrupt response(s)" in rows[0]
    assert ANSI not in out.stdout  # piped: plain


def test_ls_json_is_the_jobs_summary_plus_times(store: Path) -> None:
    out = sessions(store, "ls", "--json")
    entries = json.loads(out.stdout)
    assert [e["session_id"] for e in entries] == ["hitl", "crashed", "clean"]
    crashed = entries[1]["agents"][0]
    assert crashed["message_count"] == 2 and crashed["checkpoint"]["position"] == "after_model"
    assert crashed["last_message"]["tool_uses"] == ["get_weather"]
    assert entries[1]["updated_at"].endswith("Z") and crashed["updated_at"].endswith("Z")
    assert entries[0]["agents"][0]["interrupts_pending"] == 1


def test_show_renders_the_transcript_tool_calls_errors_and_bookmark(store: Path) -> None:
    out = sessions(store, "show", "clean")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "[0] user" in text and "What's the weather in Paris and Nowhere?" in text
    assert '→ get_weather({"city": "Paris"})  id=t1' in text
    assert "← t1 success: Sunny, 72F in Paris" in text
    assert "← t2 ERROR: " in text and "no such city: Nowhere" in text
    assert "[5] assistant" in text and "Sunny in Paris; Nowhere does not exist." in text
    assert "bookmark     after_tools · cycle 1 · message_count 6 · completed" in text
    assert "next invoke  messages-only continue (bookmark completed)" in text


def test_show_predicts_after_model_resume_and_the_sdk_agrees(store: Path) -> None:
    out = sessions(store, "show", "crashed")
    assert "resume after_model: 1 pending tool (get_weather) runs first" in out.stdout
    assert "after_model · cycle 0 · message_count 2 · active" in out.stdout
    # The prediction is what the SDK then does: rebuild with the same ids and invoke.
    result = agent(store, "crashed", ["Atlantis is sunny."], tools=recovered_tools())("continue")
    assert result.resumed_from_checkpoint and result.resume_position == "after_model"


def test_show_explains_a_gate_denial_and_the_sdk_agrees(store: Path) -> None:
    edit_json(agent_dir(store, "crashed") / "checkpoint.json", lambda b: b.update(message_count=5))
    out = sessions(store, "show", "crashed", "--json")
    decision = json.loads(out.stdout)["agents"][0]["next_invoke"]
    assert decision["action"] == "messages_only"
    assert decision["denial"] == "bookmark message_count=5 but 2 messages are stored"
    assert "get an 'interrupted' error, not re-run" in decision["summary"]
    result = agent(store, "crashed", ["ok"])("continue")
    assert not result.resumed_from_checkpoint


def test_show_pending_interrupt(store: Path) -> None:
    text = sessions(store, "show", "hitl").stdout
    assert (
        "interrupt    pending approve_transfer (interrupt-" in text
        and 'reason {"amount": 500}' in text
    )
    assert "awaiting 1 interrupt response(s) (approve_transfer)" in text


def test_show_last_n_and_agent_filter(store: Path) -> None:
    agent(
        store,
        "clean",
        [call(("x1", "get_weather", {"city": "Oslo"})), "Oslo too."],
        agent_id="helper",
    )("Oslo?")
    both = sessions(store, "show", "clean").stdout
    assert "agent worker" in both and "agent helper" in both
    only = sessions(store, "show", "clean", "--agent", "helper", "--last", "2").stdout
    assert "agent worker" not in only and "… 2 earlier message(s)" in only
    assert "[2] user" in only and "[3] assistant" in only and "[1] assistant" not in only


def test_show_json_parses_and_carries_bytes_as_stored(store: Path) -> None:
    image = {
        "role": "user",
        "content": [
            {"text": "look"},
            {"image": {"format": "png", "source": {"bytes": b"\x89PNG"}}},
        ],
    }
    agent(store, "img", ["A tiny image."], position=None)(image["content"])
    data = json.loads(sessions(store, "show", "img", "--json").stdout)
    first = data["agents"][0]["messages"][0]["message"]
    assert first["content"][1]["image"]["source"]["bytes"] == {"__bytes__": "iVBORw=="}
    assert "[image png, 4 bytes]" in sessions(store, "show", "img").stdout


def test_errors_are_one_line_with_exit_codes(store: Path, tmp_path: Path) -> None:
    missing = sessions(store, "show", "nope")
    assert missing.returncode == 2 and missing.stderr == f"elsai: no session nope in {store}\n"
    assert missing.stdout == ""
    agentless = sessions(store, "show", "clean", "--agent", "ghost")
    assert agentless.returncode == 2 and agentless.stderr.startswith(
        "elsai: no agent ghost in session clean"
    )
    bad_id = sessions(store, "check", "../etc")
    assert bad_id.returncode == 2 and len(bad_id.stderr.splitlines()) == 1
    no_store = sessions(tmp_path / "absent", "ls")
    assert no_store.returncode == 2 and "no session store at" in no_store.stderr
    both = elsai("sessions", "ls", "--storage-dir", str(store), "--s3", "s3://b/p")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr
    bad_url = elsai("sessions", "ls", "--s3", "bucket/p")
    assert (
        bad_url.returncode == 2
        and bad_url.stderr == "elsai: --s3 expects s3://bucket[/prefix], got 'bucket/p'\n"
    )


def test_default_store_and_options_before_the_subcommand(store: Path) -> None:
    here = elsai("sessions", "ls", cwd=store.parent)  # ./sessions by default
    assert here.returncode == 0 and "crashed" in here.stdout
    before = elsai("sessions", "--storage-dir", str(store), "--json", "show", "crashed")
    assert json.loads(before.stdout)["agents"][0]["next_invoke"]["action"] == "resume_after_model"


def run_on_tty(args: list[str], env: dict[str, str]) -> str:
    """Run the command with a pseudo-terminal as stdout, as in an interactive shell."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "elsai.cli", *args], stdout=follower, stderr=subprocess.PIPE, env=env
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=30)
    os.close(leader)
    return b"".join(chunks).decode()


def test_colour_only_on_a_terminal_and_never_with_no_color(store: Path) -> None:
    args = ["sessions", "show", "clean", "--storage-dir", str(store)]
    coloured = run_on_tty(args, cli_env())
    assert ANSI in coloured and "\x1b[1;31m← t2 ERROR" in coloured  # error results stand out
    assert ANSI not in run_on_tty([*args, "--no-color"], cli_env())
    assert ANSI not in run_on_tty(args, cli_env({"NO_COLOR": "1"}))


def test_long_text_is_clipped_to_the_terminal_but_not_when_piped(store: Path) -> None:
    agent(
        store,
        "long",
        ["word " * 200 + "\n" + "\n".join(f"line {i}" for i in range(40))],
        position=None,
    )("talk")
    args = ["sessions", "show", "long", "--storage-dir", str(store)]
    on_tty = run_on_tty(args, cli_env({"COLUMNS": "60", "LINES": "20"}))
    assert all(len(line) <= 60 for line in on_tty.splitlines() if ANSI not in line)
    assert "… 21 more line(s); --full shows all" in on_tty
    piped = sessions(store, "show", "long").stdout
    assert "word " * 199 in piped and "line 39" in piped


def test_show_points_at_damage_instead_of_failing(store: Path) -> None:
    (agent_dir(store, "clean") / "messages" / "message_2.json").unlink()
    (agent_dir(store, "crashed") / "checkpoint.json").write_text("{")
    gap = sessions(store, "show", "clean")
    assert gap.returncode == 0 and "[2] missing (see `elsai sessions check`)" in gap.stdout
    assert "next invoke  cannot load: gaps in message numbering" in gap.stdout
    broken = sessions(store, "show", "crashed", "--last", "0")
    assert "1 problem(s) reading this session; run `elsai sessions check crashed`" in broken.stdout
    assert "… 2 earlier message(s)" in broken.stdout and "[1]" not in broken.stdout
    assert "bookmark     checkpoint.json is unreadable" in broken.stdout
