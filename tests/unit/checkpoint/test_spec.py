"""The checkpoint spec (../shared/spec/checkpoints.md), table by table, row by row."""

from __future__ import annotations

import json
import logging
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.checkpoint import Checkpoint, CheckpointConfig, CheckpointException
from elsai.hooks import AfterToolCallEvent, BeforeModelCallEvent, MessageAddedEvent
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager
from tests.support.transcripts import assert_valid_transcript
from tests.unit.checkpoint.helpers import (
    CountingStorage,
    Crash,
    agent_dir,
    read_bookmark,
    stored_messages,
    tool_call,
)

# -- Storage layout and checkpoint.json fields ----------------------------------------------


def test_storage_layout_is_exactly_the_spec(build: Any, store: Path) -> None:
    agent = build([tool_call("t1", city="Paris"), "Sunny in Paris."])
    agent("What's the weather in Paris? Use get_weather.")
    files = sorted(
        str(p.relative_to(store))
        for p in store.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    )
    assert files == [
        "session_my-job/agents/agent_worker/agent.json",
        "session_my-job/agents/agent_worker/checkpoint.json",
        # the ownership lease sits beside checkpoint.json (which keeps only its fields)
        "session_my-job/agents/agent_worker/lease.json",
        "session_my-job/agents/agent_worker/messages/message_0.json",
        "session_my-job/agents/agent_worker/messages/message_1.json",
        "session_my-job/agents/agent_worker/messages/message_2.json",
        "session_my-job/agents/agent_worker/messages/message_3.json",
        "session_my-job/session.json",
    ]


def test_active_bookmark_has_exactly_the_spec_fields(build: Any, store: Path, ledger: Any) -> None:
    seen: list[dict[str, Any]] = []
    agent = build([tool_call("t1", city="Paris"), "done"], position="after_model")
    agent.hooks.add_callback(AfterToolCallEvent, lambda e: seen.append(read_bookmark(store)))  # type: ignore[arg-type]
    agent("weather?")
    bookmark = seen[0]
    assert list(bookmark) == [
        "position",
        "cycle_index",
        "schema_version",
        "created_at",
        "message_count",
        "agent_id",
        "execution_status",
    ]
    assert bookmark["position"] == "after_model"
    assert bookmark["cycle_index"] == 0
    assert bookmark["schema_version"] == "1.0"
    assert bookmark["created_at"].endswith("Z")
    assert (
        datetime.fromisoformat(bookmark["created_at"].replace("Z", "+00:00"))
        .utcoffset()
        .total_seconds()
        == 0
    )
    assert bookmark["message_count"] == 2
    assert bookmark["agent_id"] == "worker"
    assert bookmark["execution_status"] == "active"


def test_bookmark_is_thin_no_messages_or_tool_payloads(build: Any, store: Path) -> None:
    agent = build([tool_call("t1", city="Zanzibar-Secret-City"), "done"])
    agent("weather?")
    raw = (agent_dir(store) / "checkpoint.json").read_text()
    assert "Zanzibar" not in raw and "Sunny" not in raw and "weather?" not in raw


# -- Configure save boundaries: position table -----------------------------------------------


@pytest.mark.parametrize("overlap", [False, True])
@pytest.mark.parametrize(
    ("position", "during_tool", "before_second_model_call"),
    [
        ("after_tools", None, "after_tools"),
        ("after_model", "after_model", "after_model"),
        ("both", "after_model", "after_tools"),
    ],
)
def test_position_table(
    build: Any,
    store: Path,
    position: str,
    during_tool: Any,
    before_second_model_call: Any,
    overlap: bool,
) -> None:
    during: list[Any] = []
    before_model: list[Any] = []
    reply_stored: list[Any] = []
    manager = FileSessionManager(session_id="my-job", storage_dir=str(store))
    manager.overlap_bookmark = overlap
    agent = build([tool_call("t1", city="Paris"), "done"], position=position, manager=manager)
    agent.hooks.add_callback(AfterToolCallEvent, lambda e: during.append(read_bookmark(store)))  # type: ignore[arg-type]
    agent.hooks.add_callback(
        BeforeModelCallEvent, lambda e: before_model.append(read_bookmark(store))
    )  # type: ignore[arg-type]
    agent.hooks.add_callback(
        MessageAddedEvent,
        lambda e: (
            reply_stored.append(read_bookmark(store)) if e.message["role"] == "assistant" else None
        ),
    )  # type: ignore[arg-type]
    agent("weather?")
    assert (during[0] or {}).get("position") == during_tool
    if overlap:
        # overlap: the after_tools bookmark PUT may still be in flight while the model is
        # called (the call has no side effects), so the previous bookmark (or none) may still
        # be what is stored; it has landed before the reply is written.
        earlier = (during[0] or {}).get("position")
        assert (before_model[1] or {}).get("position") in (earlier, before_second_model_call)
    else:
        assert (before_model[1] or {}).get("position") == before_second_model_call
    assert (reply_stored[1] or {}).get("position") == before_second_model_call
    # The on-disk bookmark always has a single position, never "both".
    final = read_bookmark(store)
    assert final is not None and final["position"] in ("after_model", "after_tools")


def test_default_position_is_after_tools() -> None:
    assert CheckpointConfig().position == "after_tools"
    with pytest.raises(ValueError, match="position"):
        CheckpointConfig(position="sometimes")  # type: ignore[arg-type]


# -- Behaviour table ---------------------------------------------------------------------------


def test_overwrite_each_save_replaces_the_single_file(build: Any, store: Path) -> None:
    snapshots: list[Any] = []
    agent = build([tool_call("t1", city="A"), tool_call("t2", city="B"), "done"])
    agent.hooks.add_callback(BeforeModelCallEvent, lambda e: snapshots.append(read_bookmark(store)))  # type: ignore[arg-type]
    agent("go")
    assert [s["message_count"] for s in snapshots[1:]] == [3, 5]
    assert len(list(agent_dir(store).glob("checkpoint*"))) == 1


def test_missing_file_is_a_normal_turn(build: Any, store: Path) -> None:
    result = build(["hello"])("hi")
    assert result.resumed_from_checkpoint is False and result.resume_position is None
    assert str(result) == "hello"


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b'{"position": "after_model"}',
        json.dumps(
            {
                "position": "after_model",
                "cycle_index": 0,
                "schema_version": "2.0",
                "created_at": "2026-08-18T06:00:00Z",
                "message_count": 2,
                "agent_id": "worker",
                "execution_status": "active",
            }
        ).encode(),
        json.dumps(
            {
                "position": "sideways",
                "cycle_index": 0,
                "schema_version": "1.0",
                "created_at": "2026-08-18T06:00:00Z",
                "message_count": 2,
                "agent_id": "worker",
                "execution_status": "active",
            }
        ).encode(),
    ],
    ids=["corrupt-json", "missing-fields", "wrong-schema-version", "unknown-position"],
)
def test_corrupt_or_bad_schema_raises_checkpoint_exception_naming_the_file(
    build: Any, store: Path, content: bytes
) -> None:
    build(["hi"])("hello")
    path = agent_dir(store) / "checkpoint.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    before = sorted(p.name for p in (agent_dir(store) / "messages").iterdir())
    with pytest.raises(CheckpointException, match="checkpoint.json"):
        build(["unused"])
    assert path.read_bytes() == content  # nothing lost
    assert sorted(p.name for p in (agent_dir(store) / "messages").iterdir()) == before


def test_clean_end_turn_finalizes_as_completed_not_deleted(build: Any, store: Path) -> None:
    build([tool_call("t1", city="Paris"), "done"])("weather?")
    bookmark = read_bookmark(store)
    assert bookmark is not None
    assert bookmark["execution_status"] == "completed"
    assert bookmark["message_count"] == 4


# -- Resume semantics table ------------------------------------------------------------------


def test_after_model_active_runs_pending_tools_first_then_queued_text(
    build: Any, store: Path, ledger: Any
) -> None:
    ledger.crash_on = {1}
    first = build([tool_call("t1", city="Paris")])
    with pytest.raises(Crash):
        first("What's the weather in Paris?")
    assert read_bookmark(store)["position"] == "after_model"  # type: ignore[index]

    second = build(["It is sunny in Paris."])
    result = second("continue")
    assert result.resumed_from_checkpoint is True
    assert result.resume_position == "after_model"
    assert ledger.runs == ["Paris", "Paris"]  # the pending tool ran again, once
    messages = stored_messages(store)
    assert_valid_transcript(messages)
    # Pending tool result first, then the queued user text, in one user message.
    assert messages[2]["content"][0]["toolResult"]["toolUseId"] == "t1"
    assert messages[2]["content"][1] == {"text": "continue"}
    sent = second.model.requests[0].messages  # type: ignore[attr-defined]
    assert sent[-1]["content"][1] == {"text": "continue"}
    assert str(result) == "It is sunny in Paris."


def test_after_tools_active_appends_new_text_and_continues(build: Any, store: Path) -> None:
    crash = {"on": True}

    def crash_before_second_model_call(event: Any) -> None:
        if crash["on"] and len(event.agent.messages) == 3:
            raise Crash("died after tools")

    first = build([tool_call("t1", city="Paris")], position="after_tools")
    first.hooks.add_callback(BeforeModelCallEvent, crash_before_second_model_call)
    with pytest.raises(Crash):
        first("weather?")
    assert read_bookmark(store)["position"] == "after_tools"  # type: ignore[index]

    second = build(["Sunny."], position="after_tools")
    result = second("and tomorrow?")
    assert (result.resumed_from_checkpoint, result.resume_position) == (True, "after_tools")
    messages = stored_messages(store)
    assert_valid_transcript(messages)
    assert messages[2]["content"][-1] == {"text": "and tomorrow?"}  # merged, no second user message
    assert len(messages) == 4


def test_completed_bookmark_is_a_messages_only_continue(build: Any, store: Path) -> None:
    build([tool_call("t1", city="Paris"), "done"])("weather?")
    result = build(["again"])("hello again")
    assert (result.resumed_from_checkpoint, result.resume_position) == (False, None)
    assert stored_messages(store)[-2]["content"] == [{"text": "hello again"}]


def test_gate_deny_warns_and_falls_back_to_messages_only(
    build: Any, store: Path, ledger: Any, caplog: pytest.LogCaptureFixture
) -> None:
    ledger.crash_on = {1}
    with pytest.raises(Crash):
        build([tool_call("t1", city="Paris")])("weather?")
    path = agent_dir(store) / "checkpoint.json"
    bookmark = json.loads(path.read_text())
    bookmark["message_count"] = 7  # inconsistent with the 2 stored messages
    path.write_text(json.dumps(bookmark))

    with caplog.at_level(logging.WARNING, logger="elsai.session"):
        result = build(["I could not check the weather."])("continue")
    assert (result.resumed_from_checkpoint, result.resume_position) == (False, None)
    assert "denied" in caplog.text and "message_count=7" in caplog.text
    assert ledger.runs == ["Paris"]  # not re-run
    messages = stored_messages(store)
    assert_valid_transcript(messages)
    repaired = messages[2]["content"][0]["toolResult"]
    assert repaired["status"] == "error" and "interrupted" in repaired["content"][0]["text"]


def test_gate_deny_on_shape_mismatch(
    build: Any, store: Path, caplog: pytest.LogCaptureFixture
) -> None:
    build([tool_call("t1", city="Paris"), "done"])("weather?")
    path = agent_dir(store) / "checkpoint.json"
    bookmark = json.loads(path.read_text())
    bookmark.update(
        execution_status="active", position="after_model"
    )  # last message is text, not toolUse
    path.write_text(json.dumps(bookmark))
    with caplog.at_level(logging.WARNING, logger="elsai.session"):
        result = build(["ok"])("next")
    assert result.resumed_from_checkpoint is False
    assert "not a pending assistant toolUse" in caplog.text


def test_no_prompt_resumes_without_adding_text(build: Any, store: Path, ledger: Any) -> None:
    ledger.crash_on = {1}
    with pytest.raises(Crash):
        build([tool_call("t1", city="Paris")])("weather?")
    result = build(["Sunny."])()
    assert result.resumed_from_checkpoint is True
    messages = stored_messages(store)
    assert [b for b in messages[2]["content"] if "text" in b] == []
    assert_valid_transcript(messages)


def test_result_flags_reflect_action_not_mere_load(build: Any, store: Path, ledger: Any) -> None:
    ledger.crash_on = {1}
    with pytest.raises(Crash):
        build([tool_call("t1", city="Paris")])("weather?")
    agent = build(["Sunny.", "Still sunny."])
    first = agent("continue")
    second = agent("and now?")
    assert (first.resumed_from_checkpoint, first.resume_position) == (True, "after_model")
    assert (second.resumed_from_checkpoint, second.resume_position) == (False, None)


# -- Errors and troubleshooting table -----------------------------------------------------------


def test_checkpoint_without_session_manager_is_value_error() -> None:
    with pytest.raises(ValueError, match="session_manager"):
        Agent(
            model=ScriptedModel([], record="full"),
            config=AgentConfig(checkpoint=CheckpointConfig()),
        )


def test_checkpoint_instance_is_type_error(tmp_path: Path) -> None:
    bookmark = Checkpoint(
        position="after_tools",
        cycle_index=0,
        created_at="2026-08-18T06:00:00Z",
        message_count=0,
        agent_id="worker",
    )
    manager = FileSessionManager(session_id="s", storage_dir=str(tmp_path))
    with pytest.raises(TypeError, match="CheckpointConfig"):
        Agent(
            model=ScriptedModel([], record="full"),
            config=AgentConfig(session_manager=manager, checkpoint=bookmark),
        )  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        AgentConfig(session_manager=manager, checkpoint={"position": "both"})  # type: ignore[arg-type]


def test_checkpoint_write_failing_mid_loop_propagates(build: Any, store: Path, ledger: Any) -> None:
    manager = FileSessionManager(session_id="my-job", storage_dir=str(store))
    counting = CountingStorage(manager.storage)
    manager.storage = counting
    agent = build([tool_call("t1", city="Paris"), "done"], manager=manager)
    counting.fail_writes_to = lambda key: key.endswith("checkpoint.json")
    with pytest.raises(OSError, match="disk full"):
        agent("weather?")
    assert ledger.runs == []  # in line (the default): the loop stopped before the tool ran
    assert len(stored_messages(store)) == 2  # messages were written first


def test_failed_finalize_logs_warning_and_turn_succeeds(
    build: Any, store: Path, caplog: pytest.LogCaptureFixture
) -> None:
    manager = FileSessionManager(session_id="my-job", storage_dir=str(store))
    counting = CountingStorage(manager.storage)
    manager.storage = counting
    agent = build([tool_call("t1", city="Paris"), "Sunny."], manager=manager)
    agent.hooks.add_callback(
        BeforeModelCallEvent,
        lambda e: (
            setattr(counting, "fail_writes_to", (lambda k: k.endswith("checkpoint.json")))
            if len(e.agent.messages) == 3
            else None
        ),
    )
    with caplog.at_level(logging.WARNING, logger="elsai.session"):
        result = agent("weather?")
    assert str(result) == "Sunny."
    assert "could not finalize checkpoint" in caplog.text
    assert read_bookmark(store)["execution_status"] == "active"  # type: ignore[index]
