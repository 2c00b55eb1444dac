"""A reused invocation_id with a different prompt is refused by name,
and the positional scripted model continues a rebuilt agent where its transcript ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.errors import InvocationMismatchError, ScriptExhaustedError
from elsai.models import PositionalScriptedModel, ScriptedModel
from elsai.session import FileSessionManager

RUNS: list[str] = []


@tool
def ship(order: str) -> str:
    """Ship an order (counted, so a repeated side effect is visible)."""
    RUNS.append(order)
    return f"shipped {order}"


def call(order: str, use_id: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": use_id, "name": "ship", "input": {"order": order}}}],
    }


def build(store: Path, model: Any) -> Agent:
    return Agent(
        model=model,
        tools=[ship],
        config=AgentConfig(
            agent_id="worker",
            session_manager=FileSessionManager(session_id="orders", storage_dir=str(store)),
            checkpoint=CheckpointConfig(position="both"),
        ),
    )


def test_reused_invocation_id_with_another_prompt_names_the_invocation(tmp_path: Path) -> None:
    agent = build(tmp_path, ScriptedModel(["first answer", "never used"]))
    assert str(agent("Ship o-1.", invocation_id="req-7")) == "first answer"
    stored = list(agent.messages)
    again = build(tmp_path, ScriptedModel(["never used"]))
    with pytest.raises(InvocationMismatchError, match=r"invocation 'req-7'.*different prompt"):
        again("Ship o-2 instead.", invocation_id="req-7")
    assert isinstance(InvocationMismatchError("x"), ValueError)
    # Nothing was run or stored, and the same prompt under the same id still resumes quietly.
    assert build(tmp_path, ScriptedModel([])).messages == stored
    same = build(tmp_path, ScriptedModel([]))
    assert str(same("Ship o-1.", invocation_id="req-7")) == "first answer"
    assert same.messages == stored


def test_reuse_is_checked_on_the_same_agent_object_too(tmp_path: Path) -> None:
    agent = build(tmp_path, ScriptedModel(["one", "two"]))
    agent("first", invocation_id="a")
    agent("second", invocation_id="b")
    with pytest.raises(InvocationMismatchError, match="'a'"):
        agent("third", invocation_id="a")


def test_a_prompt_merged_into_a_tool_result_message_is_recognised(tmp_path: Path) -> None:
    # Paused after its tool cycle: the next prompt merges into the stored toolResult message.
    agent = build(tmp_path, PositionalScriptedModel([call("o-1", "t1"), "done", "more done"]))
    stops = iter([False, True])  # go on at after_model, pause at after_tools
    agent("Ship o-1.", invocation_id="p-1", should_stop=lambda: next(stops, False))
    agent("And report.", invocation_id="p-2")
    rebuilt = build(tmp_path, PositionalScriptedModel([call("o-1", "t1"), "done", "more done"]))
    assert str(rebuilt("And report.", invocation_id="p-2")) == "done"
    with pytest.raises(InvocationMismatchError):
        rebuilt("Something else.", invocation_id="p-2")


def test_positional_model_resumes_a_rebuilt_agent_where_the_transcript_ends(
    tmp_path: Path,
) -> None:
    RUNS.clear()
    script = [call("o-1", "t1"), call("o-2", "t2"), "Both shipped."]
    first = build(tmp_path, PositionalScriptedModel(script))
    stops = iter([False, True])  # go on at after_model, pause at after_tools
    paused = first("Ship o-1 and o-2.", should_stop=lambda: next(stops, False))
    assert paused.stop_reason == "paused" and RUNS == ["o-1"]
    # The same whole script, rebuilt: it continues at reply 2, so o-1 is not shipped again.
    result = build(tmp_path, PositionalScriptedModel(script))("continue")
    assert str(result) == "Both shipped." and result.resumed_from_checkpoint
    assert RUNS == ["o-1", "o-2"]
    # The call-order model would have replayed the script from its first reply instead.
    RUNS.clear()
    replay = build(tmp_path / "b", ScriptedModel(script))
    replay("Ship o-1 and o-2.")
    assert RUNS == ["o-1", "o-2"]


def test_positional_model_says_which_turn_it_has_no_reply_for(tmp_path: Path) -> None:
    agent = build(tmp_path, PositionalScriptedModel(["only reply"]))
    agent("hi")
    with pytest.raises(ScriptExhaustedError, match="already holds 1 assistant turn"):
        agent("again")
