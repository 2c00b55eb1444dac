"""The ReAct loop end to end with the scripted model: transcript, result, recorded requests."""

from __future__ import annotations

import pytest

from elsai import Agent, AgentResult, tool
from elsai.errors import ScriptExhaustedError
from elsai.models import ScriptedModel
from tests.support.messages import assistant, tool_use
from tests.support.transcripts import assert_valid_transcript


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: First addend.
        b: Second addend.
    """
    return a + b


@tool
async def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def three_cycle_script() -> list:
    return [
        assistant(tool_use("t1", "add", {"a": 2, "b": 3}), text="Let me add."),
        assistant(
            tool_use("t2", "shout", {"text": "hi"}), tool_use("t3", "add", {"a": 10, "b": -4})
        ),
        "The answers are 5, HI and 6.",
    ]


EXPECTED_TRANSCRIPT = [
    {"role": "user", "content": [{"text": "compute"}]},
    {
        "role": "assistant",
        "content": [
            {"text": "Let me add."},
            {"toolUse": {"toolUseId": "t1", "name": "add", "input": {"a": 2, "b": 3}}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"json": 5}]}}
        ],
    },
    {
        "role": "assistant",
        "content": [
            {"toolUse": {"toolUseId": "t2", "name": "shout", "input": {"text": "hi"}}},
            {"toolUse": {"toolUseId": "t3", "name": "add", "input": {"a": 10, "b": -4}}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"toolResult": {"toolUseId": "t2", "status": "success", "content": [{"text": "HI"}]}},
            {"toolResult": {"toolUseId": "t3", "status": "success", "content": [{"json": 6}]}},
        ],
    },
    {"role": "assistant", "content": [{"text": "The answers are 5, HI and 6."}]},
]


def test_three_cycle_run_produces_the_exact_transcript() -> None:
    model = ScriptedModel(three_cycle_script(), record="full")
    agent = Agent(model=model, tools=[add, shout], system_prompt="You are a calculator.")

    agent("compute")

    assert agent.messages == EXPECTED_TRANSCRIPT
    assert_valid_transcript(agent.messages)
    assert model.remaining == 0


def test_three_cycle_run_result_fields_and_metrics() -> None:
    model = ScriptedModel(three_cycle_script(), record="full")
    agent = Agent(model=model, tools=[add, shout], system_prompt="You are a calculator.")

    result = agent("compute")

    assert isinstance(result, AgentResult)
    assert result.message == EXPECTED_TRANSCRIPT[-1]
    assert result.message is agent.messages[-1]
    assert result.stop_reason == "end_turn"
    assert str(result) == "The answers are 5, HI and 6."
    assert result.structured_output is None
    assert result.resumed_from_checkpoint is False
    assert result.resume_position is None
    m = result.metrics
    assert m.cycles == 3
    assert m.model_calls == 3
    assert m.tool_calls == 3
    assert m.tool_errors == 0
    assert m.tool_counts == {"add": 2, "shout": 1}
    assert m.usage["inputTokens"] == 30  # the scripted model reports 10 input tokens a call
    assert m.usage["outputTokens"] >= 3
    assert m.usage["totalTokens"] == m.usage["inputTokens"] + m.usage["outputTokens"]
    assert m.latency_ms > 0
    assert m.to_dict()["cycles"] == 3


def test_scripted_model_records_every_request() -> None:
    model = ScriptedModel(three_cycle_script(), record="full")
    agent = Agent(model=model, tools=[add, shout], system_prompt="You are a calculator.")

    agent("compute")

    assert len(model.requests) == 3
    for request in model.requests:
        assert request.system_prompt == "You are a calculator."
        assert request.tool_specs == [add.spec, shout.spec]
        assert [s["name"] for s in request.tool_specs] == ["add", "shout"]
        assert request.tool_choice is None
    # Each call sees the whole conversation so far, ending with the user turn it answers.
    assert model.requests[0].messages == EXPECTED_TRANSCRIPT[:1]
    assert model.requests[1].messages == EXPECTED_TRANSCRIPT[:3]
    assert model.requests[2].messages == EXPECTED_TRANSCRIPT[:5]
    # Recorded requests are snapshots: later appends do not change them.
    agent.messages.append({"role": "user", "content": [{"text": "later"}]})
    assert model.requests[0].messages == EXPECTED_TRANSCRIPT[:1]


def test_tool_spec_sent_to_model_comes_from_signature_and_docstring() -> None:
    model = ScriptedModel(["ok"], record="full")
    Agent(model=model, tools=[add])("hi")
    spec = model.requests[0].tool_specs[0]
    assert spec["name"] == "add"
    assert spec["description"].startswith("Add two integers.")
    schema = spec["inputSchema"]["json"]
    assert set(schema["properties"]) == {"a", "b"}
    assert schema["properties"]["a"]["type"] == "integer"
    assert sorted(schema["required"]) == ["a", "b"]


def test_second_prompt_continues_the_same_conversation() -> None:
    model = ScriptedModel(["first answer", "second answer"], record="full")
    agent = Agent(model=model)
    agent("one")
    result = agent("two")
    assert str(result) == "second answer"
    assert model.requests[1].messages == [
        {"role": "user", "content": [{"text": "one"}]},
        {"role": "assistant", "content": [{"text": "first answer"}]},
        {"role": "user", "content": [{"text": "two"}]},
    ]
    assert result.metrics.cycles == 1  # metrics count only this invocation


def test_no_prompt_on_a_finished_conversation_does_not_call_the_model() -> None:
    model = ScriptedModel(["done"], record="full")
    agent = Agent(model=model)
    agent("hello")
    before = [dict(m) for m in agent.messages]

    result = agent()

    assert model.calls == 1
    assert len(model.requests) == 1
    assert agent.messages == before
    assert result.message == {"role": "assistant", "content": [{"text": "done"}]}
    assert str(result) == "done"
    assert result.metrics.cycles == 0
    assert result.metrics.model_calls == 0


def test_no_prompt_on_an_empty_agent_returns_an_empty_result() -> None:
    model = ScriptedModel([], record="full")
    result = Agent(model=model)()
    assert result.message is None
    assert str(result) == ""
    assert model.calls == 0


def test_no_prompt_continues_a_conversation_that_ends_with_a_user_message() -> None:
    seeded = [
        {"role": "user", "content": [{"text": "earlier"}]},
        {"role": "assistant", "content": [{"text": "noted"}]},
        {"role": "user", "content": [{"text": "what did I say?"}]},
    ]
    model = ScriptedModel(["You said 'earlier'."], record="full")
    agent = Agent(model=model, messages=seeded)

    result = agent()

    assert str(result) == "You said 'earlier'."
    assert model.requests[0].messages == seeded
    assert agent.messages == [
        *seeded,
        {"role": "assistant", "content": [{"text": "You said 'earlier'."}]},
    ]


def test_no_prompt_continues_after_pending_tool_results() -> None:
    seeded = [
        {"role": "user", "content": [{"text": "add"}]},
        assistant(tool_use("t1", "add", {"a": 1, "b": 1})),
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"json": 2}]}}
            ],
        },
    ]
    model = ScriptedModel(["It is 2."], record="full")
    agent = Agent(model=model, tools=[add], messages=seeded)
    assert str(agent()) == "It is 2."
    assert model.requests[0].messages == seeded


def test_prompt_after_tool_results_is_merged_into_the_user_turn() -> None:
    seeded = [
        {"role": "user", "content": [{"text": "add"}]},
        assistant(tool_use("t1", "add", {"a": 1, "b": 1})),
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "t1", "status": "success", "content": [{"json": 2}]}}
            ],
        },
    ]
    model = ScriptedModel(["ok"], record="full")
    agent = Agent(model=model, tools=[add], messages=seeded)
    agent("and now?")
    sent = model.requests[0].messages
    assert_valid_transcript(sent)
    assert len(sent) == 3
    assert sent[-1]["content"][-1] == {"text": "and now?"}


def test_prompt_may_be_content_blocks() -> None:
    model = ScriptedModel(["seen"], record="full")
    agent = Agent(model=model)
    agent([{"text": "a"}, {"text": "b"}])
    assert model.requests[0].messages == [
        {"role": "user", "content": [{"text": "a"}, {"text": "b"}]}
    ]
    with pytest.raises(TypeError):
        agent(42)


def test_exhausted_script_names_how_many_responses_were_given() -> None:
    model = ScriptedModel([assistant(tool_use("t1", "add", {"a": 1, "b": 2})), "3"], record="full")
    agent = Agent(model=model, tools=[add])
    agent("first")

    with pytest.raises(ScriptExhaustedError, match=r"given 2 response"):
        agent("second")
    # The failed call released the agent: the next call fails the same way, not as "busy".
    with pytest.raises(ScriptExhaustedError, match=r"given 2 response"):
        agent("third")


def test_empty_script_fails_clearly_on_first_call() -> None:
    with pytest.raises(ScriptExhaustedError, match=r"given 0 response"):
        Agent(model=ScriptedModel([], record="full"))("hi")


def test_scripted_model_rejects_a_non_assistant_item() -> None:
    with pytest.raises(ValueError, match="assistant"):  # when built, before any call
        ScriptedModel([{"role": "user", "content": [{"text": "x"}]}], record="full")


def test_callable_script_item_sees_the_request() -> None:
    def answer(request):  # type: ignore[no-untyped-def]
        return f"you sent {len(request.messages)} message(s)"

    assert str(Agent(model=ScriptedModel([answer], record="full"))("hi")) == "you sent 1 message(s)"


def test_agent_rejects_a_non_model() -> None:
    with pytest.raises(TypeError, match="Model"):
        Agent(model="us.anthropic.claude")  # type: ignore[arg-type]
