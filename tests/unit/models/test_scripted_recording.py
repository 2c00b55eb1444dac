"""ScriptedModel's recording: cheap by default, whole conversations on request."""

from __future__ import annotations

import pytest

from elsai import Agent, tool
from elsai.models import ScriptedModel


@tool
def step(n: int) -> str:
    """Do one step.

    Args:
        n: The step number.
    """
    return f"step {n}"


def _cycles(n: int) -> list[object]:
    uses = [
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": f"t{i}", "name": "step", "input": {"n": i}}}],
        }
        for i in range(n)
    ]
    return [*uses, "done"]


def test_default_records_a_summary_that_does_not_grow_with_the_conversation() -> None:
    model = ScriptedModel(_cycles(15))
    Agent(model=model, tools=[step])("go")
    assert [r.message_count for r in model.requests] == [1 + 2 * i for i in range(16)]
    assert all(r.full_messages is None for r in model.requests)
    last = model.requests[-1].last_message
    assert last is not None and last["content"][0]["toolResult"]["toolUseId"] == "t14"
    assert [s["name"] for s in model.requests[0].tool_specs] == ["step"]
    with pytest.raises(RuntimeError, match='record="full"'):
        _ = model.requests[0].messages


def test_summary_is_a_copy_not_a_live_view() -> None:
    model = ScriptedModel(["hi"])
    agent = Agent(model=model)
    agent("hello")
    agent.messages[0]["content"][0]["text"] = "changed"
    assert model.requests[0].last_message == {"role": "user", "content": [{"text": "hello"}]}


@pytest.mark.parametrize("record", ["full", True])
def test_full_recording_keeps_every_conversation(record: object) -> None:
    model = ScriptedModel(_cycles(2), record=record)  # type: ignore[arg-type]
    agent = Agent(model=model, tools=[step])
    agent("go")
    assert [len(r.messages) for r in model.requests] == [1, 3, 5]
    assert model.requests[2].messages == agent.messages[:5]


def test_record_false_keeps_nothing_and_bad_values_are_refused() -> None:
    model = ScriptedModel(["hi"], record=False)
    Agent(model=model)("hello")
    assert model.requests == [] and model.calls == 1
    with pytest.raises(ValueError, match="record must be"):
        ScriptedModel(["hi"], record="everything")  # type: ignore[arg-type]
