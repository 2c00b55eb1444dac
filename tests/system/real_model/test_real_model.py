"""elsai against a real model server: streaming, usage, structured output, a forced tool call.

Gemma 3 270M is a protocol partner, not a reasoner: the assertions are about what elsai does
with real bytes (order, assembly, validation, the loop ending), never about the answer's truth.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.loop.events import ResultEvent, TextDeltaEvent, ToolInputDeltaEvent
from elsai.models.base import ModelRequest, ModelStop, TextDelta
from elsai.models.openai import OpenAIModel
from elsai.types import text_of
from tests.support.transcripts import assert_valid_transcript
from tests.system.real_model.helpers import real_model

PROMPT = "Write one sentence about the river Seine in Paris."


def drain(events: AsyncIterator[Any]) -> list[Any]:
    async def run() -> list[Any]:
        return [event async for event in events]

    return asyncio.run(run())


class City(BaseModel):
    """A city and the country it is in."""

    name: str
    country: str


def test_text_deltas_arrive_in_order_and_assemble_into_the_message(model: OpenAIModel) -> None:
    agent = Agent(model=model)
    events = drain(agent.stream_async(PROMPT))
    deltas = [e.text for e in events if isinstance(e, TextDeltaEvent)]
    result = events[-1].result
    assert isinstance(events[-1], ResultEvent)
    assert len(deltas) > 1, "a real stream arrives in pieces"
    assert "".join(deltas) == text_of(result.message) == text_of(agent.messages[-1])
    assert result.stop_reason in ("end_turn", "max_tokens")
    assert_valid_transcript(agent.messages)


def test_usage_tokens_are_reported(server_url: str, gguf: Path) -> None:
    # Whole completions carry usage; llama.cpp's streams carry none (include_usage ignored).
    result = Agent(model=real_model(server_url, gguf, streaming=False))(PROMPT)
    usage = result.metrics.usage
    assert usage["inputTokens"] > 0 and usage["outputTokens"] > 0
    assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]
    assert text_of(result.message)
    request = ModelRequest(messages=[{"role": "user", "content": [{"text": PROMPT}]}])
    events = drain(real_model(server_url, gguf).stream(request))
    stops = [e for e in events if isinstance(e, ModelStop)]
    assert stops == [events[-1]] and any(isinstance(e, TextDelta) for e in events)
    assert stops[0].usage == {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}


def test_structured_output_validates(model: OpenAIModel) -> None:
    result = Agent(model=model)("Paris is a city in France.", structured_output_model=City)
    assert isinstance(result.structured_output, City)
    assert result.structured_output.name and result.structured_output.country


def test_a_forced_call_runs_the_user_tool_and_the_loop_ends(model: OpenAIModel) -> None:
    cities: list[str] = []

    @tool
    def population(city: str) -> str:
        """How many people live in a city."""
        cities.append(city)
        return f"{city}: 2,100,000 people"

    config = AgentConfig(tool_choice={"tool": {"name": "population"}}, tool_choice_first_only=True)
    agent = Agent(model=model, tools=[population], config=config)
    events = drain(agent.stream_async("How many people live in Paris?"))
    result = events[-1].result
    assert len(cities) == 1 and isinstance(cities[0], str)
    assert any(isinstance(e, ToolInputDeltaEvent) for e in events)
    assert result.stop_reason == "end_turn"
    assert result.metrics.model_calls == 2 and result.metrics.tool_counts == {"population": 1}
    assert_valid_transcript(agent.messages)
    assert [m["role"] for m in agent.messages] == ["user", "assistant", "user", "assistant"]
