"""Tracing without wiring: an agent emits spans once the application sets a tracer provider."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.util._once import Once

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel
from elsai.multiagent import GraphBuilder
from elsai.telemetry import OtelTracing


def reset_global_provider() -> None:
    """The API lets a process set its provider once; tests start each from "none set"."""
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace._TRACER_PROVIDER = None


@pytest.fixture
def unset() -> Iterator[None]:
    reset_global_provider()
    yield
    reset_global_provider()


@pytest.fixture
def exporter(unset: None) -> Iterator[InMemorySpanExporter]:
    """A global provider, set the way an application does, exporting to memory."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    yield exporter
    provider.shutdown()


@tool
def lookup(city: str) -> str:
    """Weather of a city."""
    return f"sunny in {city}"


def tool_run(config: AgentConfig | None = None) -> Agent:
    script = [
        {
            "role": "assistant",
            "content": [
                {"toolUse": {"toolUseId": "t1", "name": "lookup", "input": {"city": "Oslo"}}}
            ],
        },
        "It is sunny.",
    ]
    return Agent(model=ScriptedModel(script), tools=[lookup], config=config)


def names(spans: tuple[ReadableSpan, ...]) -> list[str]:
    return sorted(s.name.split(" ")[0] for s in spans)


def test_a_configured_provider_gets_spans_with_no_hook_passed(
    exporter: InMemorySpanExporter,
) -> None:
    tool_run(AgentConfig(agent_id="weather"))("weather in Oslo?")
    spans = exporter.get_finished_spans()
    assert names(spans) == ["chat", "chat", "execute_tool", "invoke_agent"]
    [invoke] = [s for s in spans if s.name == "invoke_agent weather"]
    for child in spans:
        if child is not invoke:
            assert child.parent is not None and child.parent.span_id == invoke.context.span_id
    # content capture stays opt-in
    captured = {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments"}
    assert not any(captured & set(s.attributes or {}) for s in spans)


def test_graph_nodes_get_node_spans_with_no_hook_passed(exporter: InMemorySpanExporter) -> None:
    builder = GraphBuilder()
    builder.add_node(Agent(model=ScriptedModel(["a"]), config=AgentConfig(agent_id="one")), "one")
    builder.add_node(Agent(model=ScriptedModel(["b"]), config=AgentConfig(agent_id="two")), "two")
    builder.add_edge("one", "two")
    builder.set_entry_point("one")
    builder.build()("go")
    spans = exporter.get_finished_spans()
    for node in ("one", "two"):
        [node_span] = [s for s in spans if s.name == f"invoke_node {node}"]
        [agent_span] = [s for s in spans if s.name == f"invoke_agent {node}"]
        assert agent_span.parent is not None
        assert agent_span.parent.span_id == node_span.context.span_id


def test_tracing_false_turns_the_automatic_spans_off(exporter: InMemorySpanExporter) -> None:
    agent = tool_run(AgentConfig(tracing=False))
    agent("weather in Oslo?")
    assert exporter.get_finished_spans() == ()
    assert agent.attach_tracing() is None


def test_no_configured_provider_means_no_tracing(unset: None) -> None:
    agent = tool_run()
    assert str(agent("weather in Oslo?")) == "It is sunny."
    assert agent.attach_tracing() is None


def test_an_explicit_hook_and_a_provider_make_one_set_of_spans(
    exporter: InMemorySpanExporter,
) -> None:
    explicit = OtelTracing(capture_content=True)
    agent = tool_run(AgentConfig(hooks=[explicit]))
    agent("weather in Oslo?")
    spans = exporter.get_finished_spans()
    assert names(spans) == ["chat", "chat", "execute_tool", "invoke_agent"]
    assert agent.attach_tracing() is explicit
    [invoke] = [s for s in spans if s.name.startswith("invoke_agent")]
    assert "weather in Oslo?" in str((invoke.attributes or {})["gen_ai.input.messages"])


def test_tracing_takes_a_bool() -> None:
    with pytest.raises(TypeError, match="tracing= takes True or False"):
        AgentConfig(tracing="otel")  # type: ignore[arg-type]


def run_isolated(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def test_an_agent_run_imports_no_opentelemetry_when_the_app_did_not() -> None:
    code = """
import sys
import elsai
from elsai import Agent
from elsai.models import ScriptedModel
print(str(Agent(model=ScriptedModel(["fine"]))("hi")))
print(sorted(m for m in sys.modules if m.startswith("opentelemetry")))
"""
    assert run_isolated(code) == ["fine", "[]"]


def test_without_the_extra_an_agent_runs_untraced_and_imports_nothing() -> None:
    code = """
import sys
sys.modules["opentelemetry"] = None  # as if the extra were not installed
import elsai
from elsai import Agent
from elsai.models import ScriptedModel
agent = Agent(model=ScriptedModel(["fine"]))
print(str(agent("hi")), agent.attach_tracing())
print(sorted(m for m in sys.modules if m.startswith("opentelemetry") and sys.modules[m]))
"""
    assert run_isolated(code) == ["fine None", "[]"]
