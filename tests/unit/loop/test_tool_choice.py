"""tool_choice: per agent and per invocation, forced on the first call only, checked up front."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager
from elsai.types import parse_tool_choice
from tests.support.messages import assistant, tool_use
from tests.support.transcripts import assert_valid_transcript


@tool
def lookup(city: str) -> str:
    """Population of a city."""
    return f"{city}: 2.1 million"


@tool
def clock() -> str:
    """The time."""
    return "noon"


class City(BaseModel):
    """A city."""

    name: str


CALL = assistant(tool_use("t1", "lookup", {"city": "Paris"}))


def choices(model: ScriptedModel) -> list[Any]:
    return [request.tool_choice for request in model.requests]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("auto", {"auto": {}}),
        ("any", {"any": {}}),
        ({"auto": {}}, {"auto": {}}),
        ({"any": {}}, {"any": {}}),
        ({"tool": {"name": "lookup"}}, {"tool": {"name": "lookup"}}),
        (None, None),
    ],
)
def test_the_accepted_forms_normalize_to_converse(given: Any, expected: Any) -> None:
    assert parse_tool_choice(given) == expected


@pytest.mark.parametrize(
    ("given", "hint"),
    [
        ("lookup", '{"tool": {"name": \'lookup\'}}'),
        ("required", "is not one of"),
        ({"tool": "lookup"}, "must be one of"),
        ({"tool": {"name": ""}}, "must be one of"),
        ({"auto": {}, "any": {}}, "must be one of"),
        ({"none": {}}, "must be one of"),
        (3, "must be one of"),
    ],
)
def test_a_malformed_choice_is_a_clear_error(given: Any, hint: str) -> None:
    with pytest.raises(ValueError, match="tool_choice") as info:
        parse_tool_choice(given)
    assert hint in str(info.value)


def test_per_agent_choice_is_sent_on_every_call() -> None:
    model = ScriptedModel([CALL, "done"])
    agent = Agent(model=model, tools=[lookup], config=AgentConfig(tool_choice="any"))
    agent("Population of Paris?")
    assert choices(model) == [{"any": {}}, {"any": {}}]


def test_first_only_forces_the_call_that_answers_the_user_and_the_run_ends() -> None:
    model = ScriptedModel([CALL, "Paris has 2.1 million people.", "Lyon?"])
    config = AgentConfig(tool_choice={"tool": {"name": "lookup"}}, tool_choice_first_only=True)
    agent = Agent(model=model, tools=[lookup, clock], config=config)

    result = agent("Population of Paris?")

    assert choices(model) == [{"tool": {"name": "lookup"}}, None]
    assert result.stop_reason == "end_turn" and str(result) == "Paris has 2.1 million people."
    assert_valid_transcript(agent.messages)
    # The next invocation answers new user input: forced again.
    agent("And Lyon?")
    assert choices(model)[2] == {"tool": {"name": "lookup"}}


def test_per_invocation_choice_overrides_the_agent_default() -> None:
    model = ScriptedModel([CALL, "ok", "plain"])
    agent = Agent(model=model, tools=[lookup], config=AgentConfig(tool_choice="any"))
    agent("Paris?", tool_choice={"tool": {"name": "lookup"}}, tool_choice_first_only=True)
    agent("Anything else?", tool_choice="auto")
    assert choices(model) == [{"tool": {"name": "lookup"}}, None, {"auto": {}}]


def test_unknown_tool_name_fails_before_anything_is_written(tmp_path: Path) -> None:
    model = ScriptedModel(["never sent"])
    session = FileSessionManager("s1", str(tmp_path))
    agent = Agent(model=model, tools=[lookup], config=AgentConfig(session_manager=session))
    with pytest.raises(ValueError, match=r"'weather', which the agent does not have.*\['lookup'\]"):
        agent("hi", tool_choice={"tool": {"name": "weather"}})
    assert model.calls == 0 and agent.messages == []
    assert not list(tmp_path.rglob("message_*.json"))
    with pytest.raises(ValueError, match="does not have"):
        Agent(model=model, tools=[lookup], config=AgentConfig(tool_choice={"tool": {"name": "x"}}))
    with pytest.raises(ValueError, match='"any" forces a tool call, but the agent has no tools'):
        Agent(model=model)("hi", tool_choice="any")


def test_structured_output_still_forces_its_own_tool() -> None:
    model = ScriptedModel(["Paris.", assistant(tool_use("s1", "City", {"name": "Paris"}))])
    agent = Agent(model=model, tools=[lookup])
    result = agent("Capital?", structured_output_model=City, tool_choice="auto")
    assert result.structured_output == City(name="Paris")
    assert choices(model) == [{"auto": {}}, {"tool": {"name": "City"}}]
    # Forcing the output tool by name is allowed: it is offered in this invocation.
    model = ScriptedModel([assistant(tool_use("s2", "City", {"name": "Lyon"}))])
    result = Agent(model=model)("City?", structured_output_model=City, tool_choice="any")
    assert result.structured_output == City(name="Lyon") and choices(model) == [{"any": {}}]


def test_a_resumed_invocation_forces_exactly_when_the_original_would(tmp_path: Path) -> None:
    def build(script: list[Any]) -> tuple[Agent, ScriptedModel]:
        model = ScriptedModel(script)
        config = AgentConfig(
            session_manager=FileSessionManager("s1", str(tmp_path)),
            tool_choice="any",
            tool_choice_first_only=True,
        )
        return Agent(model=model, tools=[lookup], config=config), model

    def dies(request: Any) -> Any:
        raise RuntimeError("process died before the second model call")

    agent, model = build([CALL, dies])
    with pytest.raises(RuntimeError):
        agent("Population of Paris?", invocation_id="job-1")
    assert choices(model) == [{"any": {}}, None]
    # The tool results are stored: the rebuilt agent's first call answers them, unforced.
    agent, model = build(["2.1 million."])
    result = agent("Population of Paris?", invocation_id="job-1")
    assert str(result) == "2.1 million." and choices(model) == [None]
    assert_valid_transcript(agent.messages)
