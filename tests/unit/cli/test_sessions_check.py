"""`elsai sessions check`: clean stores pass, each kind of damage is named precisely."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from elsai.session.inspect.check import Problem, check_session
from elsai.session.storage import FileStorage
from tests.unit.cli.helpers import (
    agent_dir,
    edit_json,
    run_clean,
    run_crashed,
    run_interrupted,
    sessions,
)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    run_clean(root)
    run_crashed(root)
    run_interrupted(root)
    return root


@pytest.mark.parametrize(
    ("session", "summary"),
    [
        (
            "clean",
            "6 message(s), bookmark after_tools#1 completed; next: messages-only continue (bookmark completed)",
        ),
        (
            "crashed",
            "2 message(s), bookmark after_model#0 active; next: resume after_model: 1 pending tool",
        ),
        (
            "hitl",
            "2 message(s), bookmark after_model#0 active; next: awaiting 1 interrupt response(s)",
        ),
    ],
)
def test_sound_sessions_pass(store: Path, session: str, summary: str) -> None:
    """A crashed run's trailing toolUse is covered by its active after_model bookmark; an
    interrupted one's by its pending interrupt."""
    out = sessions(store, "check", session)
    assert out.returncode == 0, out.stdout
    first, detail = out.stdout.splitlines()
    assert first.startswith(f"ok  session {session}: 1 agent(s)")
    assert detail.strip().startswith(f"worker: {summary}")


def damage_gap(store: Path) -> None:
    (agent_dir(store, "clean") / "messages" / "message_2.json").unlink()


def damage_checkpoint_json(store: Path) -> None:
    (agent_dir(store, "crashed") / "checkpoint.json").write_text(
        '{"position": "after_model", "cycle_'
    )


def damage_count(store: Path) -> None:
    edit_json(agent_dir(store, "crashed") / "checkpoint.json", lambda b: b.update(message_count=9))


def damage_orphan(store: Path) -> None:
    """An extra toolUse on the final answer, and no bookmark at all."""
    (agent_dir(store, "clean") / "checkpoint.json").unlink()
    edit_json(
        agent_dir(store, "clean") / "messages" / "message_5.json",
        lambda m: m["message"]["content"].append(
            {"toolUse": {"toolUseId": "zz", "name": "get_weather", "input": {}}}
        ),
    )


def damage_schema(store: Path) -> None:
    edit_json(
        agent_dir(store, "crashed") / "checkpoint.json", lambda b: b.update(schema_version="2.0")
    )


def damage_unknown_file(store: Path) -> None:
    (agent_dir(store, "clean") / "messages" / "notes.txt").write_text("hello")


def damage_roles(store: Path) -> None:
    edit_json(
        agent_dir(store, "clean") / "messages" / "message_3.json",
        lambda m: m["message"].update(role="user"),
    )


def damage_result_without_use(store: Path) -> None:
    path = agent_dir(store, "clean") / "messages" / "message_2.json"
    edit_json(path, lambda m: m["message"]["content"][0]["toolResult"].update(toolUseId="bogus"))


def damage_message_json(store: Path) -> None:
    (agent_dir(store, "clean") / "messages" / "message_4.json").write_text("{not json")


@pytest.mark.parametrize(
    ("damage", "session", "file", "expected"),
    [
        (
            damage_gap,
            "clean",
            "messages/message_2.json",
            ["gap in message numbering: missing message_2.json"],
        ),
        (damage_checkpoint_json, "crashed", "checkpoint.json", ["corrupt JSON: "]),
        (
            damage_count,
            "crashed",
            "checkpoint.json",
            [
                "active bookmark has message_count=9 but 2 messages are stored (the resume gate will deny it)"
            ],
        ),
        (
            damage_orphan,
            "clean",
            "messages/message_5.json",
            ["orphan toolUse zz (get_weather): no toolResult follows"],
        ),
        (
            damage_schema,
            "crashed",
            "checkpoint.json",
            ["unknown schema_version '2.0' (this SDK reads '1.0')"],
        ),
        (
            damage_unknown_file,
            "clean",
            "messages/notes.txt",
            ["unknown file in the session layout"],
        ),
        (
            damage_roles,
            "clean",
            "messages/message_4.json",
            ["roles do not alternate: message_3 and message_4 are both user"],
        ),
        (
            damage_result_without_use,
            "clean",
            "messages/message_1.json",
            ["orphan toolUse t1 (get_weather): message_2 has no toolResult"],
        ),
        (damage_message_json, "clean", "messages/message_4.json", ["corrupt JSON: "]),
    ],
)
def test_damage_is_reported_precisely(
    store: Path, damage: Callable[[Path], None], session: str, file: str, expected: list[str]
) -> None:
    damage(store)
    out = sessions(store, "check", session)
    assert out.returncode == 1, out.stdout
    path = str(agent_dir(store, session) / file)
    blocks = out.stdout.split("\n")
    reported = [
        (blocks[i].split(None, 1)[1], blocks[i + 1].strip()) for i in range(0, len(blocks) - 2, 2)
    ]
    assert any(where == path and all(e in what for e in expected) for where, what in reported), (
        out.stdout
    )
    assert blocks[-2].startswith(f"FAILED  session {session}: ")


def test_toolresult_without_tooluse_is_named(store: Path) -> None:
    damage_result_without_use(store)
    out = sessions(store, "check", "clean")
    assert "toolResult bogus answers no toolUse of the message before it" in out.stdout


def test_crash_without_checkpoints_leaves_an_orphan(tmp_path: Path) -> None:
    """Without a CheckpointConfig nothing covers the dead tool call: check says so, and says
    what the SDK will do about it."""
    run_crashed(tmp_path, "bare", position=None)
    out = sessions(tmp_path, "check", "bare")
    assert out.returncode == 1
    assert (
        "orphan toolUse t1 (get_weather): no toolResult follows and no active after_model bookmark"
        in out.stdout
    )
    assert "answers it with an 'interrupted' error" in out.stdout


def test_check_json(store: Path) -> None:
    damage_count(store)
    report = json.loads(sessions(store, "check", "crashed", "--json").stdout)
    assert report["ok"] is False and report["errors"] == 2 and report["warnings"] == 0
    assert {p["path"].rsplit("/", 1)[-1] for p in report["problems"]} == {
        "checkpoint.json",
        "message_1.json",
    }
    assert json.loads(sessions(store, "check", "clean", "--json").stdout)["ok"] is True


def test_library_returns_problems(store: Path) -> None:
    storage = FileStorage(store)
    assert check_session(storage, "clean") == []
    damage_gap(store)
    (problem,) = check_session(storage, "clean")
    assert problem == Problem(
        "error",
        str(agent_dir(store, "clean") / "messages" / "message_2.json"),
        "gap in message numbering: missing message_2.json; the agent cannot be loaded",
    )
    assert check_session(storage, "absent")[0].message == "no such session"
