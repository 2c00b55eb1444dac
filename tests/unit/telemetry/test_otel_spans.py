"""OpenTelemetry spans of agent runs, captured with the SDK's in-memory exporter."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager
from elsai.telemetry import OtelTracing


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def tracing(exporter: InMemorySpanExporter) -> Iterator[OtelTracing]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield OtelTracing(tracer_provider=provider)
    provider.shutdown()


def use(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": i, "name": n, "input": x}} for i, n, x in calls],
    }


def by_name(spans: tuple[ReadableSpan, ...], prefix: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name.startswith(prefix)]


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


@tool
async def wait_a_bit(tag: str) -> str:
    """Sleep briefly so concurrent calls overlap."""
    await asyncio.sleep(0.2)
    return f"waited {tag}"


@tool
def broken(x: int) -> str:
    """Always fails."""
    raise ValueError("no good")


def test_a_tool_run_makes_an_invoke_chat_and_tool_span_tree(
    tracing: OtelTracing, exporter: InMemorySpanExporter
) -> None:
    script = [
        use(("a", "wait_a_bit", {"tag": "a"}), ("b", "wait_a_bit", {"tag": "b"})),
        use(("c", "broken", {"x": 1})),
        "done",
    ]
    config = AgentConfig(agent_id="tracer", hooks=[tracing])
    Agent(model=ScriptedModel(script), tools=[wait_a_bit, broken], config=config)("go")
    spans = exporter.get_finished_spans()
    [invoke] = by_name(spans, "invoke_agent")
    chats, tools = by_name(spans, "chat"), by_name(spans, "execute_tool")
    assert invoke.name == "invoke_agent tracer" and invoke.parent is None
    assert invoke.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert invoke.attributes["gen_ai.agent.id"] == "tracer"
    assert invoke.attributes["elsai.resumed_from_checkpoint"] is False
    assert "elsai.resume_position" not in invoke.attributes
    assert invoke.attributes["gen_ai.usage.input_tokens"] == 30
    assert len(chats) == 3 and len(tools) == 3
    for chat in chats:
        assert parent_of(chat) == invoke.context.span_id
        assert chat.kind == SpanKind.CLIENT
        assert chat.attributes["gen_ai.operation.name"] == "chat"
        assert chat.attributes["gen_ai.system"] == "scripted"
        assert chat.attributes["gen_ai.usage.input_tokens"] == 10
        assert chat.attributes["gen_ai.usage.output_tokens"] > 0
    finish = [tuple(c.attributes["gen_ai.response.finish_reasons"]) for c in chats]
    assert finish == [("tool_use",), ("tool_use",), ("end_turn",)]
    a, b, c = sorted(tools, key=lambda s: s.attributes["gen_ai.tool.call.id"])
    assert all(parent_of(t) == invoke.context.span_id for t in (a, b, c))
    assert a.attributes["gen_ai.tool.name"] == "wait_a_bit"
    assert a.attributes["gen_ai.operation.name"] == "execute_tool"
    assert a.start_time < b.end_time and b.start_time < a.end_time, "concurrent tools overlap"
    assert (a.attributes["elsai.tool.status"], a.status.status_code) == (
        "success",
        StatusCode.UNSET,
    )
    assert (c.attributes["elsai.tool.status"], c.status.status_code) == ("error", StatusCode.ERROR)
    assert not any(k.startswith("gen_ai.input") for s in spans for k in s.attributes)


def test_sub_agents_called_as_concurrent_tools_nest_under_their_tool_span(
    tracing: OtelTracing, exporter: InMemorySpanExporter
) -> None:
    subs = [
        Agent(model=ScriptedModel([f"sub {n} done"]), config=AgentConfig(agent_id=f"sub{n}"))
        for n in (1, 2)
    ]
    for sub in subs:
        sub.hooks.add_hook(tracing)
    script = [use(("s1", "sub1", {"input": "one"}), ("s2", "sub2", {"input": "two"})), "done"]
    parent = Agent(
        model=ScriptedModel(script),
        tools=[s.as_tool(name=s.agent_id, description="a helper") for s in subs],
        config=AgentConfig(agent_id="boss", hooks=[tracing]),
    )
    parent("go")
    spans = exporter.get_finished_spans()
    tool_spans = {s.attributes["gen_ai.tool.call.id"]: s for s in by_name(spans, "execute_tool")}
    invokes = {s.attributes["gen_ai.agent.id"]: s for s in by_name(spans, "invoke_agent")}
    assert invokes["boss"].parent is None
    for n in (1, 2):
        sub_span = invokes[f"sub{n}"]
        assert parent_of(sub_span) == tool_spans[f"s{n}"].context.span_id
        assert sub_span.context.trace_id == invokes["boss"].context.trace_id
        [sub_chat] = [s for s in by_name(spans, "chat") if parent_of(s) == sub_span.context.span_id]
        assert sub_chat.attributes["gen_ai.response.finish_reasons"] == ("end_turn",)


class Crash(BaseException):
    """Not an Exception: escapes the tool runner the way a dying process would."""


def test_a_crashed_invocation_and_its_resume_are_visible(
    tracing: OtelTracing, exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    crashing = {"on": True}

    @tool
    def ship(order: str) -> str:
        """Ship an order."""
        if crashing["on"]:
            raise Crash()
        return f"shipped {order}"

    def build(script: list[Any]) -> Agent:
        config = AgentConfig(
            agent_id="shipper",
            session_manager=FileSessionManager(session_id="job-7", storage_dir=str(tmp_path)),
            checkpoint=CheckpointConfig(position="both"),
            hooks=[tracing],
        )
        return Agent(model=ScriptedModel(script), tools=[ship], config=config)

    with pytest.raises(Crash):
        build([use(("o1", "ship", {"order": "42"}))])("ship order 42")
    crashing["on"] = False
    result = build(["shipped"])("continue")
    assert result.resumed_from_checkpoint and result.resume_position == "after_model"
    spans = exporter.get_finished_spans()
    first, second = sorted(by_name(spans, "invoke_agent"), key=lambda s: s.start_time)
    assert first.status.status_code == StatusCode.ERROR
    assert "elsai.resumed_from_checkpoint" not in first.attributes
    assert second.attributes["elsai.resumed_from_checkpoint"] is True
    assert second.attributes["elsai.resume_position"] == "after_model"
    assert second.attributes["gen_ai.conversation.id"] == "job-7"
    rerun = [s for s in by_name(spans, "execute_tool") if parent_of(s) == second.context.span_id]
    assert [s.attributes["gen_ai.tool.call.id"] for s in rerun] == ["o1"]
    assert rerun[0].attributes["elsai.tool.status"] == "success"


def test_content_is_recorded_only_when_asked(exporter: InMemorySpanExporter) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing = OtelTracing(tracer_provider=provider, capture_content=True)
    script = [use(("w", "wait_a_bit", {"tag": "secret-tag"})), "the answer"]
    config = AgentConfig(hooks=[tracing])
    Agent(model=ScriptedModel(script), tools=[wait_a_bit], config=config)("my prompt")
    spans = exporter.get_finished_spans()
    [invoke] = by_name(spans, "invoke_agent")
    [tool_span] = by_name(spans, "execute_tool")
    assert "my prompt" in invoke.attributes["gen_ai.input.messages"]
    assert "the answer" in invoke.attributes["gen_ai.output.messages"]
    assert "secret-tag" in tool_span.attributes["gen_ai.tool.call.arguments"]
    assert "waited secret-tag" in tool_span.attributes["gen_ai.tool.call.result"]


def test_without_the_otel_extra_tracing_is_a_no_op_and_imports_nothing() -> None:
    code = """
import sys
sys.modules["opentelemetry"] = None  # as if the extra were not installed
from elsai import Agent
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel
from elsai.telemetry import OtelTracing
tracing = OtelTracing()
agent = Agent(model=ScriptedModel(["fine"]), config=AgentConfig(hooks=[tracing]))
print(tracing.enabled, str(agent("hi")))
print(sorted(m for m in sys.modules if m.startswith("opentelemetry") and sys.modules[m]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["False fine", "[]"]
