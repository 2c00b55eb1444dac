"""`stream_async` yields typed events ending with the result; invocations do not overlap."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest

from elsai import Agent, tool
from elsai.errors import ConcurrentInvocationError
from elsai.loop.events import (
    MessageAddedStreamEvent,
    ModelCallStartEvent,
    ResultEvent,
    StreamEvent,
    TextDeltaEvent,
    ToolEndEvent,
    ToolInputDeltaEvent,
    ToolStartEvent,
)
from elsai.models import ScriptedModel
from tests.support.messages import assistant, tool_use

FINAL = "The weather in Oslo is 4 degrees and cloudy, bring a jacket."
LOOKUP_INPUT = {"city": "Oslo", "units": "metric", "details": ["temperature", "sky"]}


@tool
def lookup(city: str, units: str, details: list[str]) -> dict[str, Any]:
    """Look up the weather."""
    return {"city": city, "temp": 4, "sky": "cloudy"}


def script() -> list[Any]:
    return [assistant(tool_use("w1", "lookup", LOOKUP_INPUT), text="Checking."), FINAL]


async def collect(agent: Agent, prompt: str) -> list[StreamEvent]:
    return [event async for event in agent.stream_async(prompt)]


def test_stream_ends_with_a_single_result_event_carrying_the_result() -> None:
    agent = Agent(model=ScriptedModel(script(), record="full"), tools=[lookup])
    events = asyncio.run(collect(agent, "weather?"))

    assert isinstance(events[-1], ResultEvent)
    assert sum(isinstance(e, ResultEvent) for e in events) == 1
    result = events[-1].result
    assert str(result) == FINAL
    assert result.stop_reason == "end_turn"
    assert result.message is agent.messages[-1]
    assert result.metrics.cycles == 2


def test_text_deltas_arrive_in_chunks_and_concatenate_to_the_text() -> None:
    agent = Agent(model=ScriptedModel(script(), chunk_size=5, record="full"), tools=[lookup])
    events = asyncio.run(collect(agent, "weather?"))

    starts = [i for i, e in enumerate(events) if isinstance(e, ModelCallStartEvent)]
    assert len(starts) == 2
    last_call = [e.text for e in events[starts[1] :] if isinstance(e, TextDeltaEvent)]
    assert len(last_call) > 1, "the final answer should stream in several chunks"
    assert "".join(last_call) == FINAL
    first_call = [e.text for e in events[: starts[1]] if isinstance(e, TextDeltaEvent)]
    assert "".join(first_call) == "Checking."


def test_tool_input_deltas_rebuild_the_tool_input() -> None:
    agent = Agent(model=ScriptedModel(script(), chunk_size=2, record="full"), tools=[lookup])
    events = asyncio.run(collect(agent, "weather?"))
    deltas = [e for e in events if isinstance(e, ToolInputDeltaEvent)]
    assert len(deltas) > 1
    assert {(d.tool_use_id, d.name) for d in deltas} == {("w1", "lookup")}
    assert json.loads("".join(d.fragment for d in deltas)) == LOOKUP_INPUT


def test_tool_start_and_end_bracket_the_call_and_precede_the_result_message() -> None:
    agent = Agent(model=ScriptedModel(script(), record="full"), tools=[lookup])
    events = asyncio.run(collect(agent, "weather?"))
    kinds = [type(e).__name__ for e in events]

    start_i, end_i = kinds.index("ToolStartEvent"), kinds.index("ToolEndEvent")
    start, end = events[start_i], events[end_i]
    assert isinstance(start, ToolStartEvent) and isinstance(end, ToolEndEvent)
    assert start.tool_use == {"toolUseId": "w1", "name": "lookup", "input": LOOKUP_INPUT}
    assert end.tool_use["toolUseId"] == "w1"
    assert end.result == {
        "toolUseId": "w1",
        "status": "success",
        "content": [{"json": {"city": "Oslo", "temp": 4, "sky": "cloudy"}}],
    }
    added = [i for i, e in enumerate(events) if isinstance(e, MessageAddedStreamEvent)]
    # user prompt, assistant toolUse, user toolResult, final assistant
    assert len(added) == 4
    assert added[1] < start_i < end_i < added[2]


def test_message_added_events_mirror_the_conversation() -> None:
    agent = Agent(model=ScriptedModel(script(), record="full"), tools=[lookup])
    events = asyncio.run(collect(agent, "weather?"))
    added = [e.message for e in events if isinstance(e, MessageAddedStreamEvent)]
    assert added == agent.messages
    assert [m["role"] for m in added] == ["user", "assistant", "user", "assistant"]


def test_invoke_async_and_the_sync_call_return_the_same_result_as_the_stream() -> None:
    streamed = asyncio.run(
        collect(Agent(model=ScriptedModel(script(), record="full"), tools=[lookup]), "weather?")
    )[-1]
    assert isinstance(streamed, ResultEvent)
    via_async_agent = Agent(model=ScriptedModel(script(), record="full"), tools=[lookup])
    via_async = asyncio.run(via_async_agent.invoke_async("weather?"))
    via_sync_agent = Agent(model=ScriptedModel(script(), record="full"), tools=[lookup])
    via_sync = via_sync_agent("weather?")

    for result in (via_async, via_sync):
        assert result.message == streamed.result.message
        assert result.stop_reason == streamed.result.stop_reason
        assert result.metrics.cycles == streamed.result.metrics.cycles
        assert result.metrics.tool_counts == streamed.result.metrics.tool_counts
    assert via_async_agent.messages == via_sync_agent.messages


def test_sync_call_works_inside_a_running_event_loop() -> None:
    agent = Agent(model=ScriptedModel(["from inside a loop"], record="full"))

    async def main() -> str:
        return str(agent("hi"))

    assert asyncio.run(main()) == "from inside a loop"


def test_second_concurrent_invocation_is_rejected_and_the_first_completes() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    @tool
    async def wait_for_release() -> str:
        """Blocks until the test releases it."""
        started.set()
        await release.wait()
        return "released"

    model = ScriptedModel(
        [assistant(tool_use("g1", "wait_for_release", {})), "first finished"], record="full"
    )
    agent = Agent(model=model, tools=[wait_for_release])

    async def main() -> Any:
        first = asyncio.create_task(agent.invoke_async("one"))
        await asyncio.wait_for(started.wait(), 5)
        with pytest.raises(ConcurrentInvocationError, match="already running"):
            await agent.invoke_async("two")
        stream = agent.stream_async("three")
        with pytest.raises(ConcurrentInvocationError):
            await stream.__anext__()
        release.set()
        return await asyncio.wait_for(first, 5)

    result = asyncio.run(main())
    assert str(result) == "first finished"
    assert model.calls == 2  # the rejected calls never reached the model
    assert [m["content"][0].get("text") for m in agent.messages if m["role"] == "user"][:1] == [
        "one"
    ]
    assert all("two" not in json.dumps(m) and "three" not in json.dumps(m) for m in agent.messages)
    # Once the first finished, the agent takes new work.
    agent.model = ScriptedModel(["again"], record="full")
    assert str(agent("four")) == "again"


def test_a_tool_calling_its_own_agent_from_a_thread_is_rejected() -> None:
    errors: list[BaseException] = []
    holder: dict[str, Agent] = {}

    @tool
    def recurse() -> str:
        """Calls the agent that is running it."""
        assert threading.current_thread() is not threading.main_thread()
        try:
            holder["agent"]("nested")
        except ConcurrentInvocationError as exc:
            errors.append(exc)
            return "refused"
        return "nested call ran"

    model = ScriptedModel([assistant(tool_use("r1", "recurse", {})), "outer done"], record="full")
    holder["agent"] = Agent(model=model, tools=[recurse])
    assert str(holder["agent"]("outer")) == "outer done"
    assert len(errors) == 1
    assert model.calls == 2


def test_closing_a_stream_mid_tool_releases_the_agent_and_keeps_the_transcript_valid() -> None:
    cancelled: list[bool] = []

    @tool
    async def slow() -> str:
        """Takes a while."""
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "finished"

    model = ScriptedModel(
        [assistant(tool_use("s1", "slow", {})), "after the interruption"], record="full"
    )
    agent = Agent(model=model, tools=[slow])

    async def main() -> Any:
        stream = agent.stream_async("start")
        async for event in stream:
            if isinstance(event, ToolStartEvent):
                break
        await stream.aclose()  # the consumer gives up while the tool runs
        return await agent.invoke_async("carry on")

    result = asyncio.run(main())
    assert cancelled == [True]
    assert str(result) == "after the interruption"
    # The abandoned call was answered (as interrupted, not re-run) before the new prompt.
    sent = model.requests[1].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    answer = sent[2]["content"]
    assert answer[0]["toolResult"]["toolUseId"] == "s1"
    assert answer[0]["toolResult"]["status"] == "error"
    assert "interrupted" in answer[0]["toolResult"]["content"][0]["text"]
    assert answer[1] == {"text": "carry on"}


def test_a_hook_failing_before_a_tool_does_not_leave_an_unanswered_tool_use() -> None:
    from elsai.hooks import BeforeToolCallEvent

    model = ScriptedModel(
        [assistant(tool_use("l1", "lookup", LOOKUP_INPUT)), "recovered"], record="full"
    )
    agent = Agent(model=model, tools=[lookup])
    calls = {"audit": 0}

    def audit(event: BeforeToolCallEvent) -> None:
        calls["audit"] += 1
        if calls["audit"] == 1:
            raise RuntimeError("audit log unavailable")

    agent.hooks.add_callback(BeforeToolCallEvent, audit)
    with pytest.raises(RuntimeError, match="audit log"):
        agent("weather?")
    assert str(agent("try again")) == "recovered"
    sent = model.requests[1].messages
    assert sent[-1]["content"][0]["toolResult"]["toolUseId"] == "l1"
    assert sent[-1]["content"][0]["toolResult"]["status"] == "error"
