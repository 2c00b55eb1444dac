"""Structured output through an internal tool, with a correction round and a retry budget."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.errors import StructuredOutputError
from elsai.models import ScriptedModel
from tests.support.messages import assistant, last_request_results, text_of_result, tool_use
from tests.support.transcripts import assert_valid_transcript


class Weather(BaseModel):
    """Current weather in one city."""

    city: str
    temp_c: float = Field(ge=-90, le=60)
    conditions: list[str] = []


VALID = {"city": "Oslo", "temp_c": 4.5, "conditions": ["cloudy"]}


@tool
def forecast(city: str) -> str:
    """Raw forecast text for a city."""
    return f"{city}: 4.5C, cloudy"


def so_call(use_id: str, inp: dict[str, Any]) -> dict[str, Any]:
    return assistant(tool_use(use_id, "Weather", inp))


def test_correction_round_then_a_validated_instance() -> None:
    model = ScriptedModel(
        [so_call("s1", {"city": "Oslo", "temp_c": 400}), so_call("s2", VALID)], record="full"
    )
    agent = Agent(model=model)

    result = agent("Weather in Oslo?", structured_output_model=Weather)

    assert isinstance(result.structured_output, Weather)
    assert result.structured_output == Weather(**VALID)
    assert result.stop_reason == "end_turn"
    # The first, invalid attempt went back to the model as an error naming the problem.
    [error] = last_request_results(model)
    assert error["toolUseId"] == "s1"
    assert error["status"] == "error"
    assert "temp_c" in text_of_result(error)
    assert "less than or equal to 60" in text_of_result(error)
    assert model.calls == 2
    assert_valid_transcript(agent.messages)
    assert agent.messages[-1]["content"][0]["toolResult"]["status"] == "success"


def test_the_internal_tool_is_offered_with_the_model_schema() -> None:
    model = ScriptedModel([so_call("s1", VALID)], record="full")
    agent = Agent(model=model, tools=[forecast])
    agent("Weather?", structured_output_model=Weather)

    specs = model.requests[0].tool_specs
    assert [s["name"] for s in specs] == ["forecast", "Weather"]
    assert specs[1]["inputSchema"]["json"] == Weather.model_json_schema()
    assert specs[1]["description"].startswith("Current weather in one city.")
    assert model.requests[0].tool_choice is None


def test_missing_field_is_described_in_the_error_result() -> None:
    model = ScriptedModel([so_call("s1", {"city": "Oslo"}), so_call("s2", VALID)], record="full")
    result = Agent(model=model)("Weather?", structured_output_model=Weather)
    [error] = last_request_results(model)
    assert "temp_c" in text_of_result(error) and "required" in text_of_result(error).lower()
    assert result.structured_output.temp_c == 4.5


def test_a_text_answer_makes_the_loop_force_the_tool() -> None:
    model = ScriptedModel(
        ["It is about 4 degrees and cloudy.", so_call("s1", VALID)], record="full"
    )
    agent = Agent(model=model)

    result = agent("Weather in Oslo?", structured_output_model=Weather)

    assert result.structured_output == Weather(**VALID)
    assert model.requests[0].tool_choice is None
    assert model.requests[1].tool_choice == {"tool": {"name": "Weather"}}
    # The second request asks for the tool in a new user turn after the text answer.
    sent = model.requests[1].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "Weather" in sent[-1]["content"][-1]["text"]
    assert_valid_transcript(agent.messages)


def test_ordinary_tools_still_run_before_the_structured_answer() -> None:
    model = ScriptedModel(
        [assistant(tool_use("f1", "forecast", {"city": "Oslo"})), so_call("s1", VALID)],
        record="full",
    )
    agent = Agent(model=model, tools=[forecast])
    result = agent("Weather?", structured_output_model=Weather)
    assert result.structured_output == Weather(**VALID)
    assert result.metrics.tool_counts == {"forecast": 1, "Weather": 1}
    assert last_request_results(model)[0]["content"] == [{"text": "Oslo: 4.5C, cloudy"}]


def test_invalid_attempts_beyond_the_budget_raise_structured_output_error() -> None:
    bad = {"city": "Oslo", "temp_c": "warm"}
    model = ScriptedModel([so_call(f"s{i}", bad) for i in range(5)], record="full")
    agent = Agent(model=model, config=AgentConfig(structured_output_retries=2))

    with pytest.raises(StructuredOutputError, match=r"Weather.*2 retries"):
        agent("Weather?", structured_output_model=Weather)

    assert model.calls == 3  # the first try plus two retries, then it gives up
    # Even the failed invocation left every toolUse answered.
    assert_valid_transcript(agent.messages)


def test_text_answers_beyond_the_budget_raise_structured_output_error() -> None:
    model = ScriptedModel(["no", "still no", "nope", "never"], record="full")
    agent = Agent(model=model, config=AgentConfig(structured_output_retries=2))
    with pytest.raises(StructuredOutputError):
        agent("Weather?", structured_output_model=Weather)
    assert model.calls == 3
    assert_valid_transcript(agent.messages)


def test_budget_counts_text_answers_and_invalid_calls_together() -> None:
    bad = {"city": "Oslo"}
    model = ScriptedModel(["text", so_call("s1", bad), so_call("s2", VALID)], record="full")
    result = Agent(model=model, config=AgentConfig(structured_output_retries=2))(
        "Weather?", structured_output_model=Weather
    )
    assert result.structured_output == Weather(**VALID)

    model = ScriptedModel(
        ["text", so_call("s1", bad), so_call("s2", bad), so_call("s3", VALID)], record="full"
    )
    with pytest.raises(StructuredOutputError):
        Agent(model=model, config=AgentConfig(structured_output_retries=2))(
            "Weather?", structured_output_model=Weather
        )


def test_the_agent_is_usable_after_structured_output_and_the_tool_is_gone() -> None:
    model = ScriptedModel([so_call("s1", VALID), "plain answer"], record="full")
    agent = Agent(model=model, tools=[forecast])
    agent("Weather?", structured_output_model=Weather)
    result = agent("thanks")
    assert result.structured_output is None
    assert [s["name"] for s in model.requests[1].tool_specs] == ["forecast"]
    assert_valid_transcript(agent.messages)


def test_structured_output_model_must_be_a_pydantic_model() -> None:
    agent = Agent(model=ScriptedModel(["x"], record="full"))
    with pytest.raises(TypeError, match="BaseModel"):
        agent("hi", structured_output_model=dict)  # type: ignore[arg-type]
