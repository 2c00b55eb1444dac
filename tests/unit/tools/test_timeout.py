"""Per-tool timeouts: a tool past its time is an error result the model sees; the loop goes on.

No test measures time: the tools block on events that only the test releases, so a result can
only come from the timeout, and what is asserted is the result and the transcript.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel
from elsai.serverless import DefaultToolTimeout
from elsai.tools import AgentTool, FunctionTool, ToolContext
from elsai.tools.timeout import TimeoutTool, with_default_timeout
from elsai.types import ToolResult, ToolSpec, ToolUse
from tests.support.messages import assistant, results_of, tool_use
from tests.support.transcripts import assert_valid_transcript


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown, so abandoned tool threads finish instead of lingering."""
    event = threading.Event()
    yield event
    event.set()


def _ask(*calls: tuple[str, str, dict[str, Any]]) -> list[Any]:
    """One assistant turn calling the tools, then a final answer."""
    return [assistant(*(tool_use(i, n, a) for i, n, a in calls)), "carried on"]


def _results(agent: Agent) -> dict[str, ToolResult]:
    return {r["toolUseId"]: r for m in agent.messages for r in results_of(m)}


def test_a_sync_tool_past_its_timeout_is_an_error_result_and_the_loop_continues(
    release: threading.Event,
) -> None:
    finished: list[str] = []

    @tool(timeout=0.2)
    def hang(order_id: str) -> str:
        """Blocks until the test ends."""
        release.wait()
        finished.append(order_id)
        return "late result"

    @tool
    def quick(order_id: str) -> str:
        """Returns at once."""
        return f"done {order_id}"

    agent = Agent(
        model=ScriptedModel(
            _ask(("h1", "hang", {"order_id": "1"}), ("q1", "quick", {"order_id": "2"}))
        ),
        tools=[hang, quick],
    )
    assert str(agent("go")) == "carried on"  # the model got the results and answered

    assert_valid_transcript(agent.messages)
    seen = _results(agent)
    assert seen["h1"] == {
        "toolUseId": "h1",
        "status": "error",
        "content": [
            {
                "text": "Error: tool 'hang' timed out after 0.2 s; it was abandoned and its "
                "result, if any, is discarded"
            }
        ],
    }
    assert seen["q1"] == {"toolUseId": "q1", "status": "success", "content": [{"text": "done 2"}]}
    assert finished == []  # abandoned, not waited for: the invocation ended first
    release.set()


def test_an_async_tool_past_its_timeout_is_cancelled(release: threading.Event) -> None:
    cleaned_up: list[bool] = []

    @tool(timeout=0.2)
    async def wait_forever() -> str:
        """Awaits forever."""
        try:
            await asyncio.Event().wait()
        finally:
            cleaned_up.append(True)
        return "never"

    agent = Agent(model=ScriptedModel(_ask(("a1", "wait_forever", {}))), tools=[wait_forever])
    assert str(agent("go")) == "carried on"
    outcome = _results(agent)["a1"]
    assert outcome["status"] == "error"
    assert "timed out after 0.2 s" in outcome["content"][0]["text"]
    assert cleaned_up == [True]
    assert_valid_transcript(agent.messages)


def test_a_timeout_error_raised_by_the_tool_itself_is_not_reported_as_its_timeout() -> None:
    @tool(timeout=30)
    def flaky() -> str:
        """Raises its own TimeoutError."""
        raise TimeoutError("upstream took too long")

    agent = Agent(model=ScriptedModel(_ask(("f1", "flaky", {}))), tools=[flaky])
    agent("go")
    text = _results(agent)["f1"]["content"][0]["text"]
    assert text == "Error: TimeoutError: upstream took too long"


def test_a_tool_within_its_timeout_returns_normally_and_keeps_its_context() -> None:
    @tool(timeout=30)
    def whoami(ctx: ToolContext) -> str:
        """Reports its call id."""
        return ctx.tool_use_id

    agent = Agent(model=ScriptedModel(_ask(("w1", "whoami", {}))), tools=[whoami])
    agent("go")
    assert _results(agent)["w1"]["content"] == [{"text": "w1"}]


@pytest.mark.parametrize("bad", [0, -1, float("inf"), float("nan")])
def test_a_timeout_that_is_not_a_positive_finite_number_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="finite number of seconds > 0"):

        @tool(timeout=bad)
        def f() -> None:
            """Never built."""


def test_timeout_is_kept_on_redecoration_and_copies_share_the_spec() -> None:
    @tool(timeout=5)
    def f(x: int) -> int:
        """Doubles x."""
        return 2 * x

    again = tool(f, description="Twice x.")
    assert again.timeout == 5 and again.spec["description"] == "Twice x."
    limited = f.with_timeout(1)
    assert isinstance(limited, FunctionTool) and limited.timeout == 1 and f.timeout == 5
    assert limited.spec is f.spec and limited(3) == 6


class _SlowAgentTool(AgentTool):
    """A hand-written AgentTool (not from @tool), e.g. what an MCP client provides."""

    @property
    def name(self) -> str:
        return "remote"

    @property
    def spec(self) -> ToolSpec:
        return {"name": "remote", "description": "A remote tool.", "inputSchema": {"json": {}}}

    async def invoke(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def test_the_default_timeout_hook_limits_tools_without_their_own(
    release: threading.Event,
) -> None:
    @tool
    def hang() -> str:
        """No timeout of its own: the default applies."""
        release.wait()
        return "late"

    @tool(timeout=0.3)
    def own() -> str:
        """Its own timeout wins over the default."""
        release.wait()
        return "late"

    model = ScriptedModel(_ask(("d1", "hang", {}), ("o1", "own", {}), ("r1", "remote", {})))
    config = AgentConfig(hooks=[DefaultToolTimeout(0.2)])
    agent = Agent(model=model, tools=[hang, own, _SlowAgentTool()], config=config)
    assert str(agent("go")) == "carried on"
    texts = {i: r["content"][0]["text"] for i, r in _results(agent).items()}
    assert texts == {
        "d1": "Error: tool 'hang' timed out after 0.2 s; it was abandoned and its result, "
        "if any, is discarded",
        "o1": "Error: tool 'own' timed out after 0.3 s; it was abandoned and its result, "
        "if any, is discarded",
        "r1": "Error: tool 'remote' timed out after 0.2 s; it was abandoned and its result, "
        "if any, is discarded",
    }
    assert hang.timeout is None  # the registered tool itself is unchanged
    assert_valid_transcript(agent.messages)


def test_with_default_timeout_wraps_only_tools_without_a_limit() -> None:
    remote = _SlowAgentTool()
    wrapped = with_default_timeout(remote, 2)
    assert isinstance(wrapped, TimeoutTool) and wrapped.inner is remote
    assert wrapped.name == "remote" and wrapped.spec == remote.spec
    assert with_default_timeout(wrapped, 9) is wrapped  # it has a timeout now
