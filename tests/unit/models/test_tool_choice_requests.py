"""tool_choice from Agent to the wire: each provider's request body over its mocked HTTP API.

Forced on the first call only, the second request (answering the tool results) carries no
`tool_choice`, so the model may end its turn.
"""

from __future__ import annotations

import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from tests.unit.models import anthropic_helpers, openai_helpers
from tests.unit.models.helpers import Reply, fixture


@tool
def get_weather(city: str, unit: str = "celsius") -> str:
    """Current weather of a city."""
    return f"{city}: 22 degrees {unit}"


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        (
            {"tool": {"name": "get_weather"}},
            {"type": "function", "function": {"name": "get_weather"}},
        ),
        ("any", "required"),
        ("auto", "auto"),
    ],
)
def test_openai_forced_first_call_then_free(choice: object, wire: object) -> None:
    model, api, _ = openai_helpers.make(
        Reply.sse(fixture("openai_tool_calls.sse")), Reply.sse(fixture("openai_text.sse"))
    )
    config = AgentConfig(tool_choice=choice, tool_choice_first_only=True)  # type: ignore[arg-type]
    result = Agent(model=model, tools=[get_weather], config=config)("Weather in Paris and Oslo?")
    assert str(result).strip() == "Paris is 22 degrees and sunny."
    first, second = api.bodies
    assert first["tool_choice"] == wire
    assert "tool_choice" not in second and second["tools"] == first["tools"]


def test_anthropic_forced_every_call_per_invocation() -> None:
    model, api, _ = anthropic_helpers.make(
        Reply.sse(fixture("anthropic_tool_use.sse")), Reply.sse(fixture("anthropic_text.sse"))
    )
    agent = Agent(model=model, tools=[get_weather])
    result = agent("How is the weather in Paris?", tool_choice={"tool": {"name": "get_weather"}})
    assert str(result).strip() == "It is 22 degrees and sunny in Paris."
    first, second = api.bodies
    assert first["tool_choice"] == second["tool_choice"] == {"type": "tool", "name": "get_weather"}


def test_anthropic_any_first_only() -> None:
    model, api, _ = anthropic_helpers.make(
        Reply.sse(fixture("anthropic_tool_use.sse")), Reply.sse(fixture("anthropic_text.sse"))
    )
    agent = Agent(model=model, tools=[get_weather])
    agent("How is the weather in Paris?", tool_choice="any", tool_choice_first_only=True)
    first, second = api.bodies
    assert first["tool_choice"] == {"type": "any"} and "tool_choice" not in second


def test_unknown_tool_name_sends_nothing() -> None:
    model, api, _ = openai_helpers.make(Reply.sse(fixture("openai_text.sse")))
    agent = Agent(model=model, tools=[get_weather])
    with pytest.raises(ValueError, match="'weather', which the agent does not have"):
        agent("hi", tool_choice={"tool": {"name": "weather"}})
    assert api.bodies == []
