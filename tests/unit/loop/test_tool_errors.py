"""Failures inside tools reach the model as error toolResults and never end the loop.

Also the `max_tokens` stop: a cut-off toolUse is dropped, the transcript stays valid.
"""

from __future__ import annotations

from typing import Any

from elsai import Agent, tool
from elsai.errors import ToolError
from elsai.models import ScriptedModel
from elsai.tools import AgentTool, ToolContext
from elsai.types import ToolResult, ToolSpec, ToolUse
from tests.support.messages import assistant, last_request_results, text_of_result, tool_use
from tests.support.transcripts import assert_valid_transcript


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b


@tool
def refuse(reason: str) -> str:
    """Always refuses."""
    raise ToolError(f"refused: {reason}")


@tool
async def async_boom() -> str:
    """Fails asynchronously."""
    raise RuntimeError("async kaboom")


class BrokenTool(AgentTool):
    """An AgentTool that breaks the 'never raise' rule."""

    @property
    def name(self) -> str:
        return "broken"

    @property
    def spec(self) -> ToolSpec:
        return {
            "name": "broken",
            "description": "Raises.",
            "inputSchema": {"json": {"type": "object"}},
        }

    async def invoke(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        raise KeyError("internal state missing")


def run(script: list[Any], tools: list[Any]) -> tuple[Agent, ScriptedModel, Any]:
    model = ScriptedModel(script, record="full")
    agent = Agent(model=model, tools=tools)
    result = agent("go")
    return agent, model, result


def test_exception_in_a_tool_becomes_an_error_result_the_model_sees() -> None:
    agent, model, result = run(
        [assistant(tool_use("d1", "divide", {"a": 1, "b": 0})), "Cannot divide by zero."], [divide]
    )
    [sent] = last_request_results(model)
    assert sent["toolUseId"] == "d1"
    assert sent["status"] == "error"
    assert "ZeroDivisionError" in text_of_result(sent)
    assert str(result) == "Cannot divide by zero."
    assert result.stop_reason == "end_turn"
    assert result.metrics.tool_errors == 1
    assert_valid_transcript(agent.messages)


def test_tool_error_message_is_passed_through_cleanly() -> None:
    _, model, _ = run([assistant(tool_use("r1", "refuse", {"reason": "policy"})), "ok"], [refuse])
    [sent] = last_request_results(model)
    assert sent["status"] == "error"
    assert text_of_result(sent) == "Error: refused: policy"


def test_async_tool_exception_becomes_an_error_result() -> None:
    _, model, _ = run([assistant(tool_use("b1", "async_boom", {})), "ok"], [async_boom])
    [sent] = last_request_results(model)
    assert sent["status"] == "error"
    assert "RuntimeError" in text_of_result(sent) and "async kaboom" in text_of_result(sent)


def test_agent_tool_that_raises_does_not_kill_the_loop() -> None:
    agent, model, result = run(
        [assistant(tool_use("k1", "broken", {})), "recovered"], [BrokenTool()]
    )
    [sent] = last_request_results(model)
    assert sent["status"] == "error"
    assert "KeyError" in text_of_result(sent)
    assert str(result) == "recovered"
    assert_valid_transcript(agent.messages)


def test_missing_and_mistyped_arguments_are_reported_by_name() -> None:
    _, model, _ = run(
        [
            assistant(tool_use("v1", "divide", {"a": 1})),
            assistant(tool_use("v2", "divide", {"a": "one", "b": 2})),
            "ok",
        ],
        [divide],
    )
    [missing] = results_in(model.requests[1].messages[-1])
    assert missing["status"] == "error"
    assert "b" in text_of_result(missing) and "required" in text_of_result(missing).lower()
    [mistyped] = results_in(model.requests[2].messages[-1])
    assert mistyped["status"] == "error"
    assert "a" in text_of_result(mistyped) and "number" in text_of_result(mistyped).lower()


def test_non_object_input_is_an_error_result() -> None:
    _, model, _ = run(
        [assistant(tool_use("n1", "divide", ["not", "an", "object"])), "ok"], [divide]
    )
    [sent] = last_request_results(model)
    assert sent["status"] == "error"
    assert "JSON object" in text_of_result(sent)


def test_unknown_tool_name_lists_the_available_tools_and_the_loop_continues() -> None:
    agent, model, result = run(
        [assistant(tool_use("u1", "delete_everything", {})), "sorry"], [divide, refuse]
    )
    [sent] = last_request_results(model)
    assert sent == {
        "toolUseId": "u1",
        "status": "error",
        "content": [{"text": "Unknown tool 'delete_everything'. Available tools: divide, refuse."}],
    }
    assert str(result) == "sorry"
    assert result.metrics.tool_errors == 1
    assert_valid_transcript(agent.messages)


def test_mixed_batch_answers_every_call_in_request_order() -> None:
    agent, model, result = run(
        [
            assistant(
                tool_use("m1", "divide", {"a": 6, "b": 3}),
                tool_use("m2", "nope", {}),
                tool_use("m3", "divide", {"a": 1, "b": 0}),
                tool_use("m4", "divide", {"a": 9, "b": 3}),
            ),
            "done",
        ],
        [divide],
    )
    sent = last_request_results(model)
    assert [r["toolUseId"] for r in sent] == ["m1", "m2", "m3", "m4"]
    assert [r["status"] for r in sent] == ["success", "error", "error", "success"]
    assert sent[0]["content"] == [{"json": 2.0}]
    assert sent[3]["content"] == [{"json": 3.0}]
    assert result.metrics.tool_calls == 4 and result.metrics.tool_errors == 2
    assert_valid_transcript(agent.messages)


def test_errors_in_consecutive_cycles_keep_the_loop_going() -> None:
    script: list[Any] = [assistant(tool_use(f"z{i}", "divide", {"a": 1, "b": 0})) for i in range(5)]
    agent, model, result = run([*script, "giving up"], [divide])
    assert result.metrics.cycles == 6
    assert result.metrics.tool_errors == 5
    assert str(result) == "giving up"
    assert_valid_transcript(agent.messages)


# -- max_tokens ------------------------------------------------------------------------------


def test_max_tokens_drops_the_truncated_tool_use() -> None:
    calls: list[str] = []

    @tool
    def write_file(path: str, body: str) -> str:
        """Write a file."""
        calls.append(path)
        return "written"

    truncated = {
        **assistant(tool_use("w1", "write_file", {"path": "/tmp/x"}), text="Writing it now."),
        "stopReason": "max_tokens",
    }
    agent, model, result = run([truncated], [write_file])

    assert result.stop_reason == "max_tokens"
    assert calls == []
    assert result.message == {"role": "assistant", "content": [{"text": "Writing it now."}]}
    assert agent.messages[-1] == result.message
    assert_valid_transcript(agent.messages)
    assert model.calls == 1


def test_max_tokens_with_only_a_tool_use_leaves_a_non_empty_message_and_can_continue() -> None:
    truncated = {**assistant(tool_use("w1", "divide", {"a": 1})), "stopReason": "max_tokens"}
    model = ScriptedModel([truncated, "continuing"], record="full")
    agent = Agent(model=model, tools=[divide])

    result = agent("go")
    assert result.stop_reason == "max_tokens"
    assert result.message is not None and result.message["content"]
    assert all("toolUse" not in b for b in result.message["content"])
    assert_valid_transcript(agent.messages)

    assert str(agent("go on")) == "continuing"
    assert_valid_transcript(model.requests[1].messages)


def results_in(message: Any) -> list[dict[str, Any]]:
    return [b["toolResult"] for b in message["content"] if "toolResult" in b]
