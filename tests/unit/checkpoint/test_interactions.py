"""The spec's "Interactions with other features" table, and what elsai adds beyond the spec."""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.conversation import SlidingWindowConversationManager
from elsai.hooks import AfterInvocationEvent, BeforeInvocationEvent
from elsai.loop.events import ResultEvent, ResumeEvent
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager, SessionConflictError
from elsai.tools import ToolContext
from tests.support.transcripts import assert_valid_transcript
from tests.unit.checkpoint.helpers import (
    CountingStorage,
    Crash,
    agent_dir,
    read_bookmark,
    stored_messages,
    tool_call,
)


def crash_first_run(build: Any, ledger: Any, **kwargs: Any) -> None:
    ledger.crash_on = {1}
    with pytest.raises(Crash):
        build([tool_call("t1", city="Paris")], **kwargs)(
            "What's the weather in Paris?", invocation_id="job-1"
        )


# -- Interactions table ------------------------------------------------------------------------


def test_streaming_final_event_carries_resume_flags(build: Any, ledger: Any) -> None:
    crash_first_run(build, ledger)
    agent = build(["Sunny."])

    async def collect() -> list[Any]:
        return [event async for event in agent.stream_async("continue")]

    events = asyncio.run(collect())
    assert isinstance(events[-1], ResultEvent)
    assert events[-1].result.resumed_from_checkpoint is True
    assert events[-1].result.resume_position == "after_model"
    assert any(isinstance(e, ResumeEvent) and e.pending_tools == 1 for e in events)


def test_invocation_hooks_fire_on_resume_invokes(build: Any, ledger: Any) -> None:
    crash_first_run(build, ledger)
    agent = build(["Sunny."])
    fired: list[str] = []
    agent.hooks.add_callback(BeforeInvocationEvent, lambda e: fired.append("before"))
    agent.hooks.add_callback(
        AfterInvocationEvent, lambda e: fired.append(f"after:{e.result.resumed_from_checkpoint}")
    )
    agent("continue")
    assert fired == ["before", "after:True"]


class Forecast(BaseModel):
    city: str
    temperature_f: int


def test_structured_output_cycle_can_leave_active_bookmark_then_finalizes(
    build: Any, store: Path, ledger: Any
) -> None:
    ledger.crash_on = {1}
    so_call = {
        "role": "assistant",
        "content": [
            {
                "toolUse": {
                    "toolUseId": "so1",
                    "name": "Forecast",
                    "input": {"city": "Paris", "temperature_f": 72},
                }
            }
        ],
    }
    with pytest.raises(Crash):
        build([tool_call("t1", city="Paris")])("forecast please", structured_output_model=Forecast)
    assert read_bookmark(store)["execution_status"] == "active"  # type: ignore[index]
    result = build([so_call])("continue", structured_output_model=Forecast)
    assert result.resumed_from_checkpoint is True
    assert result.structured_output == Forecast(city="Paris", temperature_f=72)
    assert read_bookmark(store)["execution_status"] == "completed"  # type: ignore[index]
    assert_valid_transcript(stored_messages(store))


def test_sliding_window_message_count_is_against_stored_messages(build: Any, store: Path) -> None:
    responses = [tool_call(f"t{i}", city=f"C{i}") for i in range(6)] + ["done"]
    agent = build(responses, conversation_manager=SlidingWindowConversationManager(window_size=4))
    agent("go")
    assert len(agent.messages) <= 4
    stored = stored_messages(store)
    assert len(stored) == 14
    assert read_bookmark(store)["message_count"] == 14  # type: ignore[index]

    rebuilt = build(["more"], conversation_manager=SlidingWindowConversationManager(window_size=4))
    assert len(rebuilt.messages) <= 4  # only the window is restored
    assert rebuilt.messages[-1] == stored[-1]
    rebuilt("next")
    assert len(stored_messages(store)) == 16  # numbering continued: message_14, message_15


def test_sliding_window_resume_mid_tool_cycle(build: Any, store: Path, ledger: Any) -> None:
    ledger.crash_on = {5}
    responses = [tool_call(f"t{i}", city=f"C{i}") for i in range(5)]
    with pytest.raises(Crash):
        build(responses, conversation_manager=SlidingWindowConversationManager(window_size=4))("go")
    result = build(["done"], conversation_manager=SlidingWindowConversationManager(window_size=4))(
        "continue"
    )
    assert result.resume_position == "after_model"
    assert ledger.runs == ["C0", "C1", "C2", "C3", "C4", "C4"]
    assert_valid_transcript(stored_messages(store))


# -- Beyond the spec: exactly-once prompts ----------------------------------------------------------


def test_invocation_id_makes_the_prompt_exactly_once(build: Any, store: Path, ledger: Any) -> None:
    crash_first_run(build, ledger)
    # A retry re-sends the same invocation: the prompt is not appended again; it resumes.
    result = build(["Sunny."])("What's the weather in Paris?", invocation_id="job-1")
    assert result.resumed_from_checkpoint is True
    texts = [
        b["text"]
        for m in stored_messages(store)
        for b in m["content"]
        if "text" in b and m["role"] == "user"
    ]
    assert texts == ["What's the weather in Paris?"]
    # After completion, the same id again is a no-op answer; a new id appends.
    again = build([])("What's the weather in Paris?", invocation_id="job-1")
    assert str(again) == "Sunny." and len(stored_messages(store)) == 4
    build(["New answer."])("New question", invocation_id="job-2")
    assert len(stored_messages(store)) == 6


def test_invocation_id_recorded_before_any_bookmark(build: Any, store: Path) -> None:
    def explode(request: Any) -> Any:
        raise Crash("died during the first model call")

    with pytest.raises(Crash):
        build([explode])("hello", invocation_id="inv-9")
    assert read_bookmark(store) is None
    result = build(["hi!"])("hello", invocation_id="inv-9")
    assert str(result) == "hi!"
    assert [m["role"] for m in stored_messages(store)] == ["user", "assistant"]


# -- Beyond the spec: stable tool idempotency key -------------------------------------------------


def test_idempotency_key_is_stable_across_crash_rerun(store: Path) -> None:
    keys_seen: list[str] = []
    state = {"crash": True}

    @tool
    def charge(order_id: str, ctx: ToolContext) -> str:
        """Charge an order."""
        keys_seen.append(ctx.idempotency_key)
        if state["crash"]:
            state["crash"] = False
            raise Crash("died mid-charge")
        return "charged"

    def make(responses: list[Any], session_id: str = "order-42") -> Agent:
        return Agent(
            model=ScriptedModel(responses),
            tools=[charge],
            config=AgentConfig(
                agent_id="fulfillment",
                session_manager=FileSessionManager(session_id=session_id, storage_dir=str(store)),
                checkpoint=CheckpointConfig(position="both"),
            ),
        )

    with pytest.raises(Crash):
        make([tool_call("u1", name="charge", order_id="42")])("charge it")
    make(["ok"])("continue")
    assert len(keys_seen) == 2 and keys_seen[0] == keys_seen[1]
    state["crash"] = False
    make([tool_call("u1", name="charge", order_id="42"), "ok"], session_id="order-43")("charge it")
    assert keys_seen[2] != keys_seen[0]  # a different session gives a different key


# -- Beyond the spec: single writer ---------------------------------------------------------------


def test_second_writer_gets_conflict_and_nothing_stored_changes(build: Any, store: Path) -> None:
    build(["first answer"])("first")
    first = build(["A answer"])
    second = build(["B answer"])
    second("B speaks")  # B writes message_2 and message_3
    snapshot = {p: p.read_bytes() for p in agent_dir(store).rglob("*.json")}
    with pytest.raises(SessionConflictError):
        first("A speaks")  # A believes message_2 is free
    assert {p: p.read_bytes() for p in agent_dir(store).rglob("*.json")} == snapshot


# -- Beyond the spec: id validation, reads, deprecated module --------------------------------------


@pytest.mark.parametrize("bad", ["../escape", "a/b", "a\\b", "..", "x" * 200, "tab\there", ""])
def test_ids_are_validated_before_any_io(tmp_path: Path, bad: str) -> None:
    root = tmp_path / "never-created"
    with pytest.raises(ValueError):
        FileSessionManager(session_id=bad, storage_dir=str(root))
    with pytest.raises(ValueError):
        AgentConfig(
            agent_id=bad, session_manager=FileSessionManager(session_id="ok", storage_dir=str(root))
        )
    assert not root.exists()


def test_no_reads_during_a_run(build: Any, store: Path) -> None:
    manager = FileSessionManager(session_id="my-job", storage_dir=str(store))
    counting = CountingStorage(manager.storage)
    manager.storage = counting
    agent = build([tool_call("t1", city="A"), tool_call("t2", city="B"), "done"], manager=manager)
    counting.calls.clear()
    agent("go")
    assert [c for c in counting.calls if c[0] in ("read", "list")] == []
    all_writes = [c for c in counting.calls if c[0] in ("create", "replace")]
    lease = [c for c in all_writes if c[1].endswith("/lease.json")]
    # The ownership lease costs one write to take it and one to release it (no read: it was
    # read with the rest of the agent at load).
    assert [c[0] for c in lease] == ["create", "replace"]
    writes = [c for c in all_writes if c not in lease]
    # 2 tool cycles × (assistant message, after_model, results, after_tools) + prompt + agent.json
    # (invocation id unset → no agent.json change) + final message + finalize.
    assert len(writes) == 1 + 2 * 4 + 1 + 1


def test_checkpoints_have_no_experimental_home() -> None:
    """The spec says not to import from elsai.experimental.checkpoint: there is nothing there."""
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("elsai.experimental.checkpoint")
