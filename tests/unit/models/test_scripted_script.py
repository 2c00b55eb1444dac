"""A script is plain data: any mix of its item kinds is accepted, anything else fails at build."""

from __future__ import annotations

import pytest

from elsai import Agent
from elsai.models import PositionalScriptedModel, ScriptedModel

CALL = {"toolUseId": "t1", "name": "missing", "input": {}}


def test_a_script_mixing_text_and_messages_runs() -> None:
    script = [{"role": "assistant", "content": [{"text": "first"}]}, "second"]
    model = ScriptedModel(script)
    agent = Agent(model=model)
    assert str(agent("one")) == "first"
    assert str(agent("two")) == "second"
    assert model.remaining == 0


@pytest.mark.parametrize("item", [42, None, b"bytes", ["a list"]])
def test_an_item_of_no_script_kind_fails_when_the_model_is_built(item: object) -> None:
    with pytest.raises(TypeError, match=f"response 1 must be .* got {type(item).__name__}"):
        PositionalScriptedModel(["fine", item])


@pytest.mark.parametrize(
    "item",
    [
        {"role": "user", "content": [{"text": "not the model's turn"}]},
        {"role": "assistant", "content": "not a list of blocks"},
        {"toolUse": CALL},
    ],
)
def test_a_dict_that_is_no_assistant_message_fails_when_the_model_is_built(item: object) -> None:
    with pytest.raises(ValueError, match="must be str or assistant Converse messages"):
        ScriptedModel([item])


def test_exceptions_and_callables_are_served_as_before() -> None:
    model = ScriptedModel([RuntimeError("boom"), lambda request: f"{len(request.messages)} seen"])
    agent = Agent(model=model)
    with pytest.raises(RuntimeError, match="boom"):
        agent("one")
    assert str(agent("two")).endswith("seen")
