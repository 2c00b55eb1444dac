"""tool_choice from Agent to BedrockModel's ConverseStream call (stubbed bedrock-runtime)."""

from __future__ import annotations

from typing import Any

from elsai import Agent, tool
from tests.unit.models.test_bedrock import make_model, text_stream


@tool
def weather(city: str) -> str:
    """Current weather of a city."""
    return f"{city}: 4 degrees"


def tool_stream() -> list[dict[str, Any]]:
    start = {"toolUse": {"toolUseId": "tool-1", "name": "weather"}}
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"contentBlockIndex": 0, "start": start}},
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"toolUse": {"input": '{"city": "Oslo"}'}},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "tool_use"}},
        {
            "metadata": {
                "usage": {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7},
                "metrics": {"latencyMs": 1},
            }
        },
    ]


def test_converse_tool_choice_forced_on_the_first_call_only() -> None:
    model, stubber, _ = make_model()
    sent: list[dict[str, Any]] = []
    model.client.meta.events.register(
        "provide-client-params.bedrock-runtime.ConverseStream",
        lambda params, **_: sent.append(params),
    )
    stubber.add_response("converse_stream", {"stream": tool_stream()})
    stubber.add_response("converse_stream", {"stream": text_stream("Cold.")})
    agent = Agent(model=model, tools=[weather])

    result = agent("Oslo?", tool_choice={"tool": {"name": "weather"}}, tool_choice_first_only=True)

    assert str(result) == "Cold."
    stubber.assert_no_pending_responses()
    first, second = (params["toolConfig"] for params in sent)
    assert first["toolChoice"] == {"tool": {"name": "weather"}}
    assert "toolChoice" not in second and second["tools"] == first["tools"]


def test_converse_any_and_auto_pass_through() -> None:
    for choice, wire in (("any", {"any": {}}), ({"auto": {}}, {"auto": {}})):
        model, stubber, _ = make_model()
        sent: list[dict[str, Any]] = []
        model.client.meta.events.register(
            "provide-client-params.bedrock-runtime.ConverseStream",
            lambda params, sent=sent, **_: sent.append(params),
        )
        stubber.add_response("converse_stream", {"stream": text_stream("Hi")})
        Agent(model=model, tools=[weather])("hello", tool_choice=choice)
        assert sent[0]["toolConfig"]["toolChoice"] == wire
