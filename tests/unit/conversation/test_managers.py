"""Conversation managers: sliding window, null, summarizing, and the overflow retry."""

from __future__ import annotations

from typing import Any

import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.conversation import (
    NullConversationManager,
    SlidingWindowConversationManager,
    SummarizingConversationManager,
)
from elsai.conversation.summarizing import SUMMARY_PREFIX
from elsai.errors import ContextWindowOverflowError
from elsai.hooks import AfterModelCallEvent
from elsai.models import ScriptedModel
from elsai.types import Message
from tests.support.messages import assistant, results_of, tool_use, uses_of
from tests.support.transcripts import assert_valid_transcript


@tool
def step(n: int) -> str:
    """One step of work."""
    return f"step {n} done"


def cycles(count: int, final: str = "finished") -> list[Any]:
    return [assistant(tool_use(f"s{i}", "step", {"n": i})) for i in range(count)] + [final]


def history(pairs: int) -> list[Message]:
    """`pairs` prompt/tool/answer rounds: user, assistant toolUse, user toolResult, assistant text."""
    out: list[Message] = []
    for i in range(pairs):
        out += [
            {"role": "user", "content": [{"text": f"question {i}"}]},
            assistant(tool_use(f"h{i}", "step", {"n": i})),  # type: ignore[list-item]
            {
                "role": "user",
                "content": [
                    {
                        "toolResult": {
                            "toolUseId": f"h{i}",
                            "status": "success",
                            "content": [{"text": f"r{i}"}],
                        }
                    }
                ],
            },
            {"role": "assistant", "content": [{"text": f"answer {i}"}]},
        ]
    return out


def overflow() -> ContextWindowOverflowError:
    return ContextWindowOverflowError("Input is too long for requested model")


# -- sliding window ---------------------------------------------------------------------------


@pytest.mark.parametrize("window", [2, 3, 4, 5, 7])
def test_sliding_window_bounds_the_conversation_and_keeps_it_valid(window: int) -> None:
    manager = SlidingWindowConversationManager(window_size=window)
    model = ScriptedModel(cycles(6), record="full")
    agent = Agent(model=model, tools=[step], config=AgentConfig(conversation_manager=manager))

    result = agent("work")

    total_created = 1 + 2 * 6 + 1
    assert len(agent.messages) <= window
    assert_valid_transcript(agent.messages)
    assert manager.removed_message_count == total_created - len(agent.messages)
    assert agent.messages[-1] == result.message
    # Every request the model saw was valid, and none exceeded the window by more than the
    # one assistant message still to come.
    for request in model.requests:
        assert_valid_transcript(request.messages)
        assert len(request.messages) <= window


def test_sliding_window_never_leaves_an_orphan_tool_result() -> None:
    manager = SlidingWindowConversationManager(window_size=4)
    agent = Agent(
        model=ScriptedModel(cycles(5), record="full"),
        tools=[step],
        config=AgentConfig(conversation_manager=manager),
    )
    agent("work")
    first = agent.messages[0]
    assert first["role"] == "user"
    assert not results_of(first)
    # A trimmed-away toolUse's result survives only as plain text.
    assert any("step" in b.get("text", "") for b in first["content"]) or first["content"] == [
        {"text": "work"}
    ]
    for prev, nxt in zip(agent.messages, agent.messages[1:], strict=False):
        if uses_of(prev):
            assert [u["toolUseId"] for u in uses_of(prev)] == [
                r["toolUseId"] for r in results_of(nxt)
            ]


def test_sliding_window_leaves_a_short_conversation_alone() -> None:
    manager = SlidingWindowConversationManager(window_size=40)
    agent = Agent(
        model=ScriptedModel(cycles(3), record="full"),
        tools=[step],
        config=AgentConfig(conversation_manager=manager),
    )
    agent("work")
    assert len(agent.messages) == 8
    assert manager.removed_message_count == 0
    assert agent.messages[0] == {"role": "user", "content": [{"text": "work"}]}


def test_sliding_window_rejects_a_window_below_two() -> None:
    with pytest.raises(ValueError):
        SlidingWindowConversationManager(window_size=1)


def test_default_manager_is_a_sliding_window() -> None:
    agent = Agent(model=ScriptedModel([], record="full"))
    assert isinstance(agent.conversation_manager, SlidingWindowConversationManager)


def test_overflow_reduces_the_window_and_retries_once() -> None:
    manager = SlidingWindowConversationManager(window_size=40)
    model = ScriptedModel([overflow(), "fits now"], record="full")
    agent = Agent(
        model=model,
        tools=[step],
        messages=history(3),
        config=AgentConfig(conversation_manager=manager),
    )
    seen: list[Any] = []
    agent.hooks.add_callback(AfterModelCallEvent, lambda e: seen.append(e.exception))

    result = agent("question 3")

    assert str(result) == "fits now"
    assert model.calls == 2
    first, retried = model.requests[0].messages, model.requests[1].messages
    assert len(first) == 13
    assert len(retried) < len(first)
    assert_valid_transcript(retried)
    assert retried[-1] == {"role": "user", "content": [{"text": "question 3"}]}
    assert manager.removed_message_count == len(first) - len(retried)
    assert isinstance(seen[0], ContextWindowOverflowError) and seen[1] is None
    assert_valid_transcript(agent.messages)


def test_a_second_overflow_in_the_same_call_propagates() -> None:
    model = ScriptedModel([overflow(), overflow(), "unreachable"], record="full")
    agent = Agent(model=model, tools=[step], messages=history(3))
    with pytest.raises(ContextWindowOverflowError):
        agent("question 3")
    assert model.calls == 2


def test_overflow_retry_is_per_model_call_not_per_invocation() -> None:
    model = ScriptedModel(
        [overflow(), assistant(tool_use("s1", "step", {"n": 1})), overflow(), "done"], record="full"
    )
    agent = Agent(model=model, tools=[step], messages=history(4))
    assert str(agent("go")) == "done"
    assert model.calls == 4
    assert_valid_transcript(agent.messages)


# -- null -------------------------------------------------------------------------------------


def test_null_manager_keeps_everything() -> None:
    manager = NullConversationManager()
    agent = Agent(
        model=ScriptedModel(cycles(30), record="full"),
        tools=[step],
        config=AgentConfig(conversation_manager=manager),
    )
    agent("work")
    assert len(agent.messages) == 1 + 2 * 30 + 1
    assert manager.removed_message_count == 0
    assert agent.messages[0] == {"role": "user", "content": [{"text": "work"}]}


def test_null_manager_reraises_overflow_without_retrying() -> None:
    model = ScriptedModel([overflow(), "unreachable"], record="full")
    agent = Agent(
        model=model,
        messages=history(2),
        config=AgentConfig(conversation_manager=NullConversationManager()),
    )
    with pytest.raises(ContextWindowOverflowError, match="too long"):
        agent("more")
    assert model.calls == 1
    assert len(agent.messages) == 9


# -- summarizing ------------------------------------------------------------------------------


def test_summarizing_manager_summarizes_the_oldest_messages_on_overflow() -> None:
    summarizer = ScriptedModel(["The user asked questions 0-1; steps ran fine."], record="full")
    manager = SummarizingConversationManager(
        summary_ratio=0.5, preserve_recent_messages=2, summarization_model=summarizer
    )
    model = ScriptedModel([overflow(), "answer 2"], record="full")
    seeded = history(2)
    agent = Agent(
        model=model, tools=[step], messages=seeded, config=AgentConfig(conversation_manager=manager)
    )

    result = agent("question 2")

    assert str(result) == "answer 2"
    assert model.calls == 2 and summarizer.calls == 1
    # What was summarized: the oldest messages, ending on a user turn, plus the instruction.
    summarized = summarizer.requests[0].messages
    assert_valid_transcript(summarized)
    assert summarized[:-1] == seeded[: len(summarized) - 1]
    assert manager.summarization_prompt in summarized[-1]["content"][-1]["text"]
    assert [s["name"] for s in summarizer.requests[0].tool_specs] == ["step"]
    # The retried request starts with the summary as a user message and is still valid.
    retried = model.requests[1].messages
    assert retried[0] == {
        "role": "user",
        "content": [{"text": SUMMARY_PREFIX + "The user asked questions 0-1; steps ran fine."}],
    }
    assert_valid_transcript(retried)
    assert retried[1]["role"] == "assistant"
    assert manager.removed_message_count == len(summarized)
    assert len(retried) == len(model.requests[0].messages) - len(summarized) + 1
    assert_valid_transcript(agent.messages)
    assert manager.get_state()["summary"] == retried[0]


def test_summarizing_keeps_tool_pairs_together() -> None:
    summarizer = ScriptedModel(["summary"], record="full")
    manager = SummarizingConversationManager(
        summary_ratio=0.3, preserve_recent_messages=2, summarization_model=summarizer
    )
    seeded = history(3)  # a split at 0.3 * 13 = 3 would land between a toolUse and its result
    agent = Agent(
        model=ScriptedModel([overflow(), "ok"], record="full"),
        tools=[step],
        messages=seeded,
        config=AgentConfig(conversation_manager=manager),
    )
    agent("question 3")
    kept = agent.messages[1:]
    assert kept[0]["role"] == "assistant"
    assert_valid_transcript(agent.messages)
    for prev, nxt in zip(agent.messages, agent.messages[1:], strict=False):
        if uses_of(prev):
            assert [u["toolUseId"] for u in uses_of(prev)] == [
                r["toolUseId"] for r in results_of(nxt)
            ]


def test_summarizing_again_folds_the_previous_summary_in() -> None:
    summarizer = ScriptedModel(["first summary", "second summary"], record="full")
    manager = SummarizingConversationManager(
        summary_ratio=0.5, preserve_recent_messages=2, summarization_model=summarizer
    )
    model = ScriptedModel([overflow(), "a", overflow(), "b"], record="full")
    agent = Agent(
        model=model,
        tools=[step],
        messages=history(3),
        config=AgentConfig(conversation_manager=manager),
    )
    agent("q")
    removed_after_first = manager.removed_message_count
    agent("q2")
    assert summarizer.calls == 2
    assert (
        summarizer.requests[1].messages[0]["content"][0]["text"] == SUMMARY_PREFIX + "first summary"
    )
    assert agent.messages[0]["content"][0]["text"] == SUMMARY_PREFIX + "second summary"
    assert manager.removed_message_count > removed_after_first
    assert_valid_transcript(agent.messages)


def test_summarizing_uses_the_agent_model_when_none_is_given() -> None:
    manager = SummarizingConversationManager(summary_ratio=0.5, preserve_recent_messages=2)
    model = ScriptedModel([overflow(), "the summary", "final"], record="full")
    agent = Agent(
        model=model,
        tools=[step],
        messages=history(2),
        config=AgentConfig(conversation_manager=manager),
    )
    assert str(agent("q")) == "final"
    assert agent.messages[0]["content"][0]["text"] == SUMMARY_PREFIX + "the summary"


def test_summarizing_reraises_when_nothing_can_be_summarized() -> None:
    manager = SummarizingConversationManager(
        preserve_recent_messages=10, summarization_model=ScriptedModel(["x"], record="full")
    )
    model = ScriptedModel([overflow()], record="full")
    agent = Agent(
        model=model, messages=history(1), config=AgentConfig(conversation_manager=manager)
    )
    with pytest.raises(ContextWindowOverflowError):
        agent("q")


def test_summarizing_does_not_trim_proactively() -> None:
    manager = SummarizingConversationManager(summarization_model=ScriptedModel([], record="full"))
    agent = Agent(
        model=ScriptedModel(cycles(30), record="full"),
        tools=[step],
        config=AgentConfig(conversation_manager=manager),
    )
    agent("work")
    assert len(agent.messages) == 62
