"""What llama.cpp's OpenAI-compatible server really sends, replayed over mocked HTTP.

The fixtures were recorded from `llama_cpp.server` 0.3.36 with Gemma 3 270M (make e2e-real).
It differs from OpenAI's streams: every tool-call chunk repeats the call's id and name and a
legacy `function_call` beside `tool_calls`; no usage chunk (it ignores
`stream_options.include_usage`; whole completions do carry usage); it rejects a null assistant
`content`, with a 500; and a handler that fails after the 200 closes the stream with no chunk.
"""

from __future__ import annotations

import json

from elsai import Agent, tool
from elsai.errors import ModelError
from elsai.models.base import ModelRequest, TextDelta, ToolInputDelta, ToolUseStart
from tests.unit.models.helpers import Reply, assemble, collect, collect_until_error, fixture
from tests.unit.models.openai_helpers import HELLO, make

POPULATION = {
    "name": "population",
    "description": "How many people live in a city.",
    "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}},
}
FORCED = ModelRequest(
    messages=HELLO.messages, tool_specs=[POPULATION], tool_choice={"tool": {"name": "population"}}
)


def recorded_call_id() -> str:
    for line in fixture("llamacpp_tool_call.sse").splitlines():
        if '"tool_calls": [' in line:
            return str(
                json.loads(line[len("data: ") :])["choices"][0]["delta"]["tool_calls"][0]["id"]
            )
    raise AssertionError("the fixture has no tool call")


def json_reply(name: str) -> Reply:
    return Reply(200, fixture(name), "application/json")


def test_a_streamed_call_repeating_its_id_and_name_is_one_call() -> None:
    model, _, _ = make(Reply.sse(fixture("llamacpp_tool_call.sse")))
    events = collect(model, FORCED)
    starts = [e for e in events if isinstance(e, ToolUseStart)]
    assert len(starts) == 1 and starts[0].name == "population"
    assert len([e for e in events if isinstance(e, ToolInputDelta)]) > 5
    assembled = assemble(events)
    assert assembled.stop_reason == "tool_use"
    [block] = assembled.message()["content"]
    assert block["toolUse"]["input"] == {"city": "Paris, France"}
    assert block["toolUse"]["toolUseId"] == starts[0].tool_use_id
    # No usage chunk in llama.cpp's streams: the counters stay at zero.
    assert assembled.usage == {"inputTokens": 0, "outputTokens": 0, "totalTokens": 0}


def test_streamed_text_ends_with_length() -> None:
    model, _, _ = make(Reply.sse(fixture("llamacpp_text.sse")))
    events = collect(model, HELLO)
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assembled = assemble(events)
    assert len(texts) > 1 and assembled.stop_reason == "max_tokens"
    assert assembled.message()["content"] == [{"text": "".join(texts)}]


def test_whole_completions_carry_usage_and_tool_calls() -> None:
    model, api, _ = make(json_reply("llamacpp_tool_call.json"), streaming=False)
    assembled = assemble(collect(model, FORCED))
    assert api.bodies[0]["stream"] is False and "stream_options" not in api.bodies[0]
    assert assembled.usage == {"inputTokens": 35, "outputTokens": 11, "totalTokens": 46}
    assert assembled.stop_reason == "tool_use"
    [block] = assembled.message()["content"]
    assert block["toolUse"]["name"] == "population"
    assert block["toolUse"]["input"] == {"city": "Paris, France"}


def test_an_agent_tool_cycle_sends_string_content_beside_tool_calls() -> None:
    @tool
    def population(city: str) -> str:
        """How many people live in a city."""
        return f"{city}: 2,100,000"

    model, api, _ = make(
        Reply.sse(fixture("llamacpp_tool_call.sse")), Reply.sse(fixture("llamacpp_text.sse"))
    )
    agent = Agent(model=model, tools=[population])
    agent("How many people live in Paris?", tool_choice={"tool": {"name": "population"}})
    assistant = api.bodies[1]["messages"][1]
    assert assistant["role"] == "assistant" and assistant["content"] == ""
    assert assistant["tool_calls"][0]["id"] == recorded_call_id()
    assert api.bodies[1]["messages"][2]["tool_call_id"] == recorded_call_id()


def test_a_stream_closed_without_any_chunk_is_an_error_not_an_empty_answer() -> None:
    model, api, sleeps = make(Reply.sse(""))
    seen, exc = collect_until_error(model, FORCED)
    assert seen == [] and type(exc) is ModelError
    assert "ended without a finish_reason" in str(exc)
    assert len(api.bodies) == 1 and sleeps.calls == []


def test_a_request_validation_500_is_not_retried() -> None:
    detail = "1 validation error:\n  {'type': 'string_type', 'loc': ('body', 'messages', 1)}"
    body = {"error": {"message": detail, "type": "internal_server_error", "code": None}}
    model, api, sleeps = make(Reply(500, json.dumps(body), "application/json"))
    _, exc = collect_until_error(model, HELLO)
    assert type(exc) is ModelError and "validation error" in str(exc)
    assert len(api.bodies) == 1 and sleeps.calls == []


def test_a_failure_after_part_of_the_reply_says_so() -> None:
    cut = fixture("llamacpp_text.sse").split("data: ")[:4]
    stream = "data: ".join(cut) + 'data: {"error": {"message": "boom", "type": "server_error"}}\n\n'
    model, api, sleeps = make(Reply.sse(stream))
    seen, exc = collect_until_error(model, HELLO)
    assert [e for e in seen if isinstance(e, TextDelta)] and type(exc) is ModelError
    assert "call failed mid-reply" in str(exc) and "not retried" in str(exc)
    assert len(api.bodies) == 1 and sleeps.calls == []
