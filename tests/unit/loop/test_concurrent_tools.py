"""Several toolUse blocks in one assistant message: concurrent by default, ordered results."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.loop.events import ToolEndEvent
from elsai.models import ScriptedModel
from elsai.tools.executor import ConcurrentToolExecutor, SequentialToolExecutor, ToolExecutor
from tests.support.messages import assistant, last_request_results, tool_use
from tests.support.transcripts import assert_valid_transcript

# Delays in request order: the first call is the slowest, so completion order is reversed.
DELAYS = {"c1": 0.6, "c2": 0.4, "c3": 0.2}


class Timeline:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spans: dict[str, tuple[float, float]] = {}

    def record(self, key: str, start: float) -> None:
        with self.lock:
            self.spans[key] = (start, time.perf_counter())


def make_tools(timeline: Timeline) -> list[Any]:
    @tool
    async def slow_async(key: str, delay: float) -> str:
        """Sleeps without blocking the event loop."""
        start = time.perf_counter()
        await asyncio.sleep(delay)
        timeline.record(key, start)
        return f"async {key}"

    @tool
    def slow_sync(key: str, delay: float) -> str:
        """Blocks its thread."""
        start = time.perf_counter()
        time.sleep(delay)
        timeline.record(key, start)
        return f"sync {key}"

    return [slow_async, slow_sync]


def batch_script() -> list[Any]:
    return [
        assistant(
            tool_use("c1", "slow_async", {"key": "c1", "delay": DELAYS["c1"]}),
            tool_use("c2", "slow_sync", {"key": "c2", "delay": DELAYS["c2"]}),
            tool_use("c3", "slow_sync", {"key": "c3", "delay": DELAYS["c3"]}),
        ),
        "all done",
    ]


def run_batch(config: AgentConfig | None) -> tuple[Agent, ScriptedModel, Timeline, list[str]]:
    timeline = Timeline()
    model = ScriptedModel(batch_script())
    agent = Agent(model=model, tools=make_tools(timeline), config=config)
    ended: list[str] = []

    async def consume() -> None:
        async for event in agent.stream_async("run them"):
            if isinstance(event, ToolEndEvent):
                ended.append(event.tool_use["toolUseId"])

    asyncio.run(consume())
    return agent, model, timeline, ended


def test_tools_of_one_message_overlap_in_time_and_results_keep_request_order() -> None:
    agent, model, timeline, ended = run_batch(None)

    spans = timeline.spans
    assert sorted(spans) == ["c1", "c2", "c3"]
    # Every call started before the first one finished: they really ran together (sequential
    # runs would make each start after the previous end), the two sync ones in worker threads.
    assert max(s for s, _ in spans.values()) < min(e for _, e in spans.values())
    # They finished fastest-first ...
    assert ended == ["c3", "c2", "c1"]
    # ... but the model sees the results in the order it asked for them.
    results = last_request_results(model)
    assert [r["toolUseId"] for r in results] == ["c1", "c2", "c3"]
    assert [r["content"] for r in results] == [
        [{"text": "async c1"}],
        [{"text": "sync c2"}],
        [{"text": "sync c3"}],
    ]
    assert_valid_transcript(agent.messages)


def test_sequential_executor_runs_one_call_at_a_time_in_request_order() -> None:
    agent, model, timeline, ended = run_batch(AgentConfig(tool_executor="sequential"))

    spans = [timeline.spans[k] for k in ("c1", "c2", "c3")]
    for (_, prev_end), (next_start, _) in zip(spans, spans[1:], strict=False):
        assert next_start >= prev_end, "a call started before the previous one finished"
    assert ended == ["c1", "c2", "c3"]
    assert [r["toolUseId"] for r in last_request_results(model)] == ["c1", "c2", "c3"]
    assert_valid_transcript(agent.messages)


def test_executor_config_values() -> None:
    assert isinstance(Agent(model=ScriptedModel([])).tool_executor, ConcurrentToolExecutor)
    assert isinstance(
        Agent(
            model=ScriptedModel([]), config=AgentConfig(tool_executor="sequential")
        ).tool_executor,
        SequentialToolExecutor,
    )
    with pytest.raises(ValueError, match="tool_executor"):
        Agent(model=ScriptedModel([]), config=AgentConfig(tool_executor="parallel"))


def test_custom_executor_decides_scheduling_and_results_are_still_ordered() -> None:
    class ReversedExecutor(ToolExecutor):
        """Runs calls last-first, one at a time, but must return results in request order."""

        def __init__(self) -> None:
            self.order: list[str] = []

        async def execute(self, calls, run_one):  # type: ignore[no-untyped-def]
            out = {}
            for call in reversed(list(calls)):
                self.order.append(call["toolUseId"])
                out[call["toolUseId"]] = await run_one(call)
            return [out[c["toolUseId"]] for c in calls]

    @tool
    def echo(x: int) -> int:
        """Echo."""
        return x

    executor = ReversedExecutor()
    model = ScriptedModel(
        [assistant(*(tool_use(f"e{i}", "echo", {"x": i}) for i in range(4))), "ok"]
    )
    Agent(model=model, tools=[echo], config=AgentConfig(tool_executor=executor))("go")
    assert executor.order == ["e3", "e2", "e1", "e0"]
    results = last_request_results(model)
    assert [r["toolUseId"] for r in results] == ["e0", "e1", "e2", "e3"]
    assert [r["content"] for r in results] == [[{"json": i}] for i in range(4)]


def test_many_concurrent_async_calls_keep_order() -> None:
    @tool
    async def jitter(i: int) -> int:
        """Sleeps a little, inversely to i."""
        await asyncio.sleep(0.001 * (20 - i))
        return i * i

    model = ScriptedModel(
        [assistant(*(tool_use(f"j{i}", "jitter", {"i": i}) for i in range(20))), "ok"]
    )
    Agent(model=model, tools=[jitter])("go")
    results = last_request_results(model)
    assert [r["toolUseId"] for r in results] == [f"j{i}" for i in range(20)]
    assert [r["content"][0]["json"] for r in results] == [i * i for i in range(20)]
