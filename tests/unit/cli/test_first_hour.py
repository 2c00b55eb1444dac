"""The CLI in a user's first hour: `ls` agrees with `show`/`check` on bad
bookmarks, `tail --until-complete` ends on a final answer, `--version`, `check --agent`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from elsai import __version__
from tests.unit.cli.helpers import (
    agent,
    agent_dir,
    edit_json,
    elsai,
    run_clean,
    run_crashed,
    sessions,
)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    run_crashed(root)
    return root


def _position(data: dict[str, Any]) -> None:
    data["position"] = "after_modle"


def _schema(data: dict[str, Any]) -> None:
    data["schema_version"] = "9.9"


def _agent_id(data: dict[str, Any]) -> None:
    data["agent_id"] = "someone-else"


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (_position, "cannot load: checkpoint.json is unreadable"),
        (_schema, "cannot load: checkpoint.json is unreadable"),
        (_agent_id, "gate would deny"),
    ],
    ids=["misspelt-position", "foreign-schema", "foreign-agent"],
)
def test_ls_predicts_what_show_and_check_predict(
    store: Path, damage: Callable[[dict[str, Any]], None], expected: str
) -> None:
    edit_json(agent_dir(store, "crashed") / "checkpoint.json", damage)
    listed = json.loads(sessions(store, "ls", "--json").stdout)
    ls_next = listed[0]["agents"][0]["next_invoke"]
    shown = json.loads(sessions(store, "show", "crashed", "--json").stdout)
    checked = json.loads(sessions(store, "check", "crashed", "--json").stdout)
    assert ls_next == shown["agents"][0]["next_invoke"]["summary"]
    assert ls_next == checked["agents"][0]["next_invoke"]
    assert expected in ls_next and "resume" not in ls_next.split("(")[0]
    table = sessions(store, "ls").stdout
    assert expected in table


def test_version_flag() -> None:
    out = elsai("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"elsai {__version__}"


def test_check_takes_agent_like_show_and_tail(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    run_clean(root, "job")
    agent(root, "job", ["hello"], agent_id="helper")("hi")
    (agent_dir(root, "job", "worker") / "messages" / "message_2.json").unlink()
    whole = sessions(root, "check", "job")
    assert whole.returncode == 1
    helper = sessions(root, "check", "job", "--agent", "helper", "--json")
    assert helper.returncode == 0, helper.stdout
    report = json.loads(helper.stdout)
    assert report["ok"] and [a["agent_id"] for a in report["agents"]] == ["helper"]
    worker = sessions(root, "check", "job", "--agent", "worker")
    assert worker.returncode == 1 and "message_2" in worker.stdout
    missing = sessions(root, "check", "job", "--agent", "nobody")
    assert missing.returncode == 2 and "no agent nobody" in missing.stderr


def test_check_accepts_the_ownership_lease_file(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    run_clean(root, "job")
    assert (agent_dir(root, "job") / "lease.json").exists()
    out = sessions(root, "check", "job")
    assert out.returncode == 0 and "unknown file" not in out.stdout, out.stdout


def _tail_until_complete(root: Path, session: str) -> Any:
    import subprocess
    import sys

    from tests.unit.cli.helpers import cli_env

    proc = subprocess.Popen(
        [sys.executable, "-m", "elsai.cli", "sessions", "tail", session, "--storage-dir"]
        + [str(root), "--interval", "0.05", "--timeout", "30", "--until-complete"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    assert proc.stdout is not None
    seen = ""
    while "elsai: " not in seen:  # the stored state is shown, then what it waits for
        line = proc.stdout.readline()
        assert line, f"tail ended early: {seen!r}"
        seen += line
    return proc, seen


def test_tail_until_complete_ends_on_a_final_answer_without_any_bookmark(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    agent(root, "chat", ["Hello!"])("hi")  # no tool call: no bookmark written
    assert not (agent_dir(root, "chat") / "checkpoint.json").exists()
    proc, seen = _tail_until_complete(root, "chat")
    assert "the session is complete" in seen and "waiting for the next turn" in seen
    agent(root, "chat", ["Hello again!"])("hi again")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Hello again!" in out


def test_tail_until_complete_says_which_agent_it_waits_for(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    run_crashed(root)  # mid-tool: the last message is a tool call
    proc, seen = _tail_until_complete(root, "crashed")
    assert "waiting until the last message of worker is a final answer" in seen
    proc.terminate()
    proc.communicate(timeout=60)


def test_a_corrupt_bookmark_says_how_to_look_and_repair(store: Path) -> None:
    from elsai.checkpoint import CheckpointException

    edit_json(agent_dir(store, "crashed") / "checkpoint.json", _position)
    with pytest.raises(CheckpointException) as caught:
        agent(store, "crashed", ["never used"])
    message = str(caught.value)
    assert "elsai sessions check crashed" in message
    assert "move checkpoint.json aside" in message and "position" in message
