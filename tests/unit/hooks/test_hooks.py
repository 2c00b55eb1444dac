"""Hooks fire in a fixed order and can change exactly the fields they are allowed to."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.hooks import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeModelCallEvent,
    BeforeToolCallEvent,
    HookEvent,
    HookRegistry,
    MessageAddedEvent,
)
from elsai.models import ScriptedModel
from tests.support.messages import assistant, last_request_results, text_of_result, tool_use

ALL_EVENTS = [
    BeforeInvocationEvent,
    AfterInvocationEvent,
    MessageAddedEvent,
    BeforeModelCallEvent,
    AfterModelCallEvent,
    BeforeToolCallEvent,
    AfterToolCallEvent,
]

ran: list[dict[str, Any]] = []


@tool
def add(a: int, b: int) -> int:
    """Add."""
    ran.append({"a": a, "b": b})
    return a + b


@tool
def subtract(a: int, b: int) -> int:
    """Subtract."""
    return a - b


class Recorder:
    """A HookProvider that records every event it sees, tagged with its own label."""

    def __init__(self, label: str, log: list[tuple[str, str]]) -> None:
        self.label, self.log = label, log

    def register_hooks(self, registry: HookRegistry) -> None:
        for event_type in ALL_EVENTS:
            registry.add_callback(event_type, self._record)

    def _record(self, event: HookEvent) -> None:
        self.log.append((self.label, type(event).__name__))


def one_tool_cycle() -> ScriptedModel:
    return ScriptedModel([assistant(tool_use("t1", "add", {"a": 1, "b": 2})), "3"], record="full")


def test_events_of_a_tool_cycle_fire_in_order() -> None:
    log: list[tuple[str, str]] = []
    agent = Agent(
        model=one_tool_cycle(), tools=[add], config=AgentConfig(hooks=[Recorder("a", log)])
    )
    agent("add")
    assert [name for _, name in log] == [
        "BeforeInvocationEvent",
        "MessageAddedEvent",  # the prompt
        "BeforeModelCallEvent",
        "AfterModelCallEvent",
        "MessageAddedEvent",  # assistant toolUse
        "BeforeToolCallEvent",
        "AfterToolCallEvent",
        "MessageAddedEvent",  # toolResult
        "BeforeModelCallEvent",
        "AfterModelCallEvent",
        "MessageAddedEvent",  # final answer
        "AfterInvocationEvent",
    ]


def test_after_events_run_in_reverse_registration_order() -> None:
    log: list[tuple[str, str]] = []
    agent = Agent(
        model=one_tool_cycle(), tools=[add], config=AgentConfig(hooks=[Recorder("first", log)])
    )
    agent.hooks.add_hook(Recorder("second", log))  # registered later, through the registry
    agent("add")

    by_event: dict[str, list[str]] = {}
    for label, name in log[:12]:
        by_event.setdefault(name, []).append(label)
    for name, labels in by_event.items():
        per_firing = [labels[i : i + 2] for i in range(0, len(labels), 2)]
        expected = ["second", "first"] if name.startswith("After") else ["first", "second"]
        assert all(pair == expected for pair in per_firing), (name, labels)
    assert len(log) == 24  # both providers saw all twelve events


def test_add_hook_rejects_an_object_without_register_hooks() -> None:
    with pytest.raises(TypeError):
        Agent(model=ScriptedModel([], record="full")).hooks.add_hook(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Agent(model=ScriptedModel([], record="full")).hooks.add_callback(dict, lambda e: None)  # type: ignore[arg-type]


def test_message_added_carries_each_message_and_after_invocation_the_result() -> None:
    agent = Agent(model=one_tool_cycle(), tools=[add])
    added: list[Any] = []
    results: list[Any] = []
    agent.hooks.add_callback(MessageAddedEvent, lambda e: added.append(e.message))
    agent.hooks.add_callback(AfterInvocationEvent, lambda e: results.append(e.result))
    result = agent("add")
    assert added == agent.messages
    assert results == [result]


def test_before_tool_call_may_rewrite_the_input() -> None:
    ran.clear()
    model = one_tool_cycle()
    agent = Agent(model=model, tools=[add])

    def double_a(event: BeforeToolCallEvent) -> None:
        assert event.tool_use is not None
        event.tool_use = {**event.tool_use, "input": {"a": 100, "b": 2}}

    agent.hooks.add_callback(BeforeToolCallEvent, double_a)
    agent("add")
    assert ran == [{"a": 100, "b": 2}]
    [sent] = last_request_results(model)
    assert sent == {"toolUseId": "t1", "status": "success", "content": [{"json": 102}]}


def test_before_tool_call_may_select_another_tool() -> None:
    model = one_tool_cycle()
    agent = Agent(model=model, tools=[add])
    agent.hooks.add_callback(BeforeToolCallEvent, lambda e: setattr(e, "selected_tool", subtract))
    agent("add")
    assert last_request_results(model)[0]["content"] == [{"json": -1}]


def test_before_tool_call_may_cancel_with_a_message_for_the_model() -> None:
    ran.clear()
    model = one_tool_cycle()
    agent = Agent(model=model, tools=[add])

    async def deny(event: BeforeToolCallEvent) -> None:  # async callbacks are awaited
        await asyncio.sleep(0)
        event.cancel_tool = "add is disabled by policy"

    agent.hooks.add_callback(BeforeToolCallEvent, deny)
    result = agent("add")
    assert ran == []
    [sent] = last_request_results(model)
    assert sent["toolUseId"] == "t1"
    assert sent["status"] == "error"
    assert text_of_result(sent) == "add is disabled by policy"
    assert result.metrics.tool_errors == 1


def test_cancel_tool_true_uses_a_default_message() -> None:
    model = one_tool_cycle()
    agent = Agent(model=model, tools=[add])
    agent.hooks.add_callback(BeforeToolCallEvent, lambda e: setattr(e, "cancel_tool", True))
    agent("add")
    [sent] = last_request_results(model)
    assert sent["status"] == "error" and "cancel" in text_of_result(sent)


def test_after_tool_call_may_replace_the_result_and_its_id_is_kept() -> None:
    model = one_tool_cycle()
    agent = Agent(model=model, tools=[add])

    def redact(event: AfterToolCallEvent) -> None:
        assert event.result is not None and event.result["content"] == [{"json": 3}]
        event.result = {
            "toolUseId": "wrong",
            "status": "success",
            "content": [{"text": "[redacted]"}],
        }

    agent.hooks.add_callback(AfterToolCallEvent, redact)
    agent("add")
    assert last_request_results(model) == [
        {"toolUseId": "t1", "status": "success", "content": [{"text": "[redacted]"}]}
    ]


def test_after_tool_call_sees_the_exception_of_a_failing_tool() -> None:
    class Boom:
        def register_hooks(self, registry: HookRegistry) -> None:
            registry.add_callback(AfterToolCallEvent, self.seen.append)

        def __init__(self) -> None:
            self.seen: list[AfterToolCallEvent] = []

    from elsai.tools import AgentTool

    class Raising(AgentTool):
        name = "raising"  # type: ignore[assignment]
        spec = {"name": "raising", "description": "r", "inputSchema": {"json": {"type": "object"}}}  # type: ignore[assignment]

        async def invoke(self, tool_use, context):  # type: ignore[no-untyped-def]
            raise OSError("disk gone")

    hook = Boom()
    model = ScriptedModel([assistant(tool_use("r1", "raising", {})), "ok"], record="full")
    Agent(model=model, tools=[Raising()], config=AgentConfig(hooks=[hook]))("go")
    [event] = hook.seen
    assert isinstance(event.exception, OSError)
    assert event.result is not None and event.result["status"] == "error"


def test_after_model_call_retry_discards_the_response_and_calls_again() -> None:
    model = ScriptedModel(["draft that a guardrail rejects", "clean answer"], record="full")
    agent = Agent(model=model)
    seen: list[str] = []

    def reject_first(event: AfterModelCallEvent) -> None:
        assert event.message is not None
        seen.append(event.message["content"][0]["text"])
        if len(seen) == 1:
            event.retry = True

    agent.hooks.add_callback(AfterModelCallEvent, reject_first)
    result = agent("hi")
    assert str(result) == "clean answer"
    assert model.calls == 2
    assert model.requests[0].messages == model.requests[1].messages
    assert agent.messages == [
        {"role": "user", "content": [{"text": "hi"}]},
        {"role": "assistant", "content": [{"text": "clean answer"}]},
    ]


def test_after_model_call_retry_recovers_from_a_model_exception() -> None:
    model = ScriptedModel([ConnectionError("flaky network"), "recovered"], record="full")
    agent = Agent(model=model)
    errors: list[BaseException | None] = []

    def retry_on_error(event: AfterModelCallEvent) -> None:
        errors.append(event.exception)
        if event.exception is not None:
            event.retry = True

    agent.hooks.add_callback(AfterModelCallEvent, retry_on_error)
    assert str(agent("hi")) == "recovered"
    assert isinstance(errors[0], ConnectionError) and errors[1] is None


def test_model_exception_without_a_retry_hook_propagates() -> None:
    agent = Agent(model=ScriptedModel([ConnectionError("down")], record="full"))
    with pytest.raises(ConnectionError, match="down"):
        agent("hi")


def test_before_invocation_may_rewrite_the_input_messages() -> None:
    model = ScriptedModel(["ok"], record="full")
    agent = Agent(model=model)

    def tag(event: BeforeInvocationEvent) -> None:
        assert event.messages == [{"role": "user", "content": [{"text": "hi"}]}]
        event.messages = [{"role": "user", "content": [{"text": "[tenant=acme] hi"}]}]

    agent.hooks.add_callback(BeforeInvocationEvent, tag)
    agent("hi")
    assert model.requests[0].messages == [
        {"role": "user", "content": [{"text": "[tenant=acme] hi"}]}
    ]
    assert agent.messages[0] == {"role": "user", "content": [{"text": "[tenant=acme] hi"}]}


@pytest.mark.parametrize(
    ("event_type", "field"),
    [
        (BeforeInvocationEvent, "agent"),
        (MessageAddedEvent, "message"),
        (BeforeModelCallEvent, "agent"),
        (AfterModelCallEvent, "message"),
        (AfterModelCallEvent, "stop_reason"),
        (BeforeToolCallEvent, "invocation_state"),
        (AfterToolCallEvent, "tool_use"),
        (AfterToolCallEvent, "exception"),
        (AfterInvocationEvent, "result"),
    ],
)
def test_assigning_a_read_only_field_raises(event_type: type[HookEvent], field: str) -> None:
    agent = Agent(model=one_tool_cycle(), tools=[add])
    outcomes: list[str] = []

    def try_write(event: HookEvent) -> None:
        try:
            setattr(event, field, None)
        except AttributeError as exc:
            outcomes.append(str(exc))
        else:
            outcomes.append("written")

    agent.hooks.add_callback(event_type, try_write)
    agent("add")
    assert outcomes, f"{event_type.__name__} never fired"
    assert all("read-only" in o for o in outcomes), outcomes


def test_a_hook_that_raises_fails_the_invocation_and_releases_the_agent() -> None:
    agent = Agent(model=ScriptedModel(["never", "second"], record="full"))
    calls = 0

    def explode(event: BeforeModelCallEvent) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("hook failed")

    agent.hooks.add_callback(BeforeModelCallEvent, explode)
    with pytest.raises(RuntimeError, match="hook failed"):
        agent("one")
    assert str(agent("two")) == "never"  # the agent is usable again


def test_base_class_callback_sees_every_event() -> None:
    agent = Agent(model=ScriptedModel(["ok"], record="full"))
    names: list[str] = []
    agent.hooks.add_callback(HookEvent, lambda e: names.append(type(e).__name__))
    agent("hi")
    assert names[0] == "BeforeInvocationEvent" and names[-1] == "AfterInvocationEvent"
    assert len(names) == 6
