"""Spans around agents: one per Graph node, one per serverless slice (retries visible)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel
from elsai.multiagent import GraphBuilder
from elsai.serverless import SliceRequest, run_slice
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


def named(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def test_each_graph_node_gets_a_span_around_its_agent(
    tracing: OtelTracing, exporter: InMemorySpanExporter
) -> None:
    def node(agent_id: str, text: str) -> Agent:
        config = AgentConfig(agent_id=agent_id, hooks=[tracing])
        return Agent(model=ScriptedModel([text]), config=config)

    builder = GraphBuilder()
    builder.add_node(node("researcher", "sunny"), "researcher")
    builder.add_node(node("writer", "It is sunny."), "writer")
    builder.add_edge("researcher", "writer")
    builder.set_entry_point("researcher")
    result = builder.build()("weather?")
    assert str(result).endswith("It is sunny.")
    spans = exporter.get_finished_spans()
    for name in ("researcher", "writer"):
        [node_span] = named(spans, f"invoke_node {name}")
        [agent_span] = named(spans, f"invoke_agent {name}")
        assert parent_of(agent_span) == node_span.context.span_id
        assert node_span.attributes["elsai.node.name"] == name
        assert node_span.attributes["elsai.node.status"] == "completed"
        assert node_span.attributes["elsai.resumed_from_checkpoint"] is False
    [first] = named(spans, "invoke_node researcher")
    [second] = named(spans, "invoke_node writer")
    assert first.end_time <= second.start_time, "the writer runs after the researcher"
    # the whole run is one span above the node spans
    [run] = [s for s in spans if s.name.startswith("invoke_graph ")]
    assert parent_of(first) == parent_of(second) == run.context.span_id
    assert run.attributes["elsai.node.status"] == "completed"
    assert run.start_time <= first.start_time and second.end_time <= run.end_time


def test_a_swarm_run_is_one_span_above_its_node_spans(
    tracing: OtelTracing, exporter: InMemorySpanExporter
) -> None:
    from elsai.multiagent import Swarm

    handoff = {"toolUse": {"toolUseId": "h", "name": "handoff_to_agent",
                           "input": {"agent_name": "closer", "message": "yours"}}}  # fmt: skip
    triage = Agent(model=ScriptedModel([{"role": "assistant", "content": [handoff]}, "passed on"]),
                   config=AgentConfig(agent_id="triage", hooks=[tracing]))  # fmt: skip
    closer = Agent(
        model=ScriptedModel(["closed"]), config=AgentConfig(agent_id="closer", hooks=[tracing])
    )
    result = Swarm([triage, closer], node_timeout=None, execution_timeout=None)("help")
    assert str(result) == "closed"
    spans = exporter.get_finished_spans()
    [run] = [s for s in spans if s.name.startswith("invoke_swarm ")]
    nodes = [s for s in spans if s.name.startswith("invoke_node ")]
    assert [s.name for s in sorted(nodes, key=lambda s: s.start_time)] == [
        "invoke_node triage", "invoke_node closer"
    ]  # fmt: skip
    assert {parent_of(s) for s in nodes} == {run.context.span_id}


class LambdaDied(BaseException):
    """Escapes everything, like a Lambda killed at its deadline."""


def test_a_retried_slice_shows_as_two_spans_of_the_same_slice(
    tracing: OtelTracing, exporter: InMemorySpanExporter, tmp_path: Path
) -> None:
    dying = {"on": True}

    @tool
    def ship(order: str) -> str:
        """Ship an order."""
        if dying["on"]:
            raise LambdaDied()
        return f"shipped {order}"

    scripts: list[list[Any]] = [
        [
            {
                "role": "assistant",
                "content": [
                    {"toolUse": {"toolUseId": "o", "name": "ship", "input": {"order": "7"}}}
                ],
            }
        ],
        ["all shipped"],
    ]

    def factory(config: AgentConfig) -> Agent:
        return Agent(model=ScriptedModel(scripts.pop(0)), tools=[ship], config=config)

    def attempt(n: int) -> Any:
        request = SliceRequest(
            job_id="job-9",
            execution_id="exec-9",
            session_id="job-9",
            agent_id="shipper",
            prompt="ship order 7",
            slice=0,
            attempt=n,
        )
        return run_slice(
            request,
            session_manager=FileSessionManager(session_id="job-9", storage_dir=str(tmp_path)),
            factory=factory,
            remaining_ms=lambda: 900_000,
            tracing=tracing,
            span_attributes={"faas.invocation_id": f"request-{n}"},
        )

    with pytest.raises(LambdaDied):
        attempt(0)
    dying["on"] = False
    outcome = attempt(1)
    assert (outcome.status, outcome.resumed_from_checkpoint) == ("completed", True)
    spans = exporter.get_finished_spans()
    slices = sorted(named(spans, "run_slice job-9"), key=lambda s: s.start_time)
    assert [s.attributes["elsai.slice.attempt"] for s in slices] == [0, 1]
    for span in slices:
        assert span.attributes["elsai.job_id"] == "job-9"
        assert span.attributes["elsai.execution_id"] == "exec-9"
        assert span.attributes["elsai.slice"] == 0
    failed, retried = slices
    assert failed.status.status_code == StatusCode.ERROR
    assert failed.attributes["faas.invocation_id"] == "request-0"
    assert retried.attributes["elsai.resumed_from_checkpoint"] is True
    assert retried.attributes["elsai.resume_position"] == "after_model"
    assert retried.attributes["elsai.slice.status"] == "completed"
    invokes = named(spans, "invoke_agent shipper")
    assert sorted(parent_of(s) for s in invokes) == sorted(s.context.span_id for s in slices)
