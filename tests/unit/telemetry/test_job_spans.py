"""One trace per serverless Graph/Swarm job: ids from the job id, step spans under the run span."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from elsai.multiagent.base import Status
from elsai.multiagent.step_types import StepOutcome
from elsai.telemetry import OtelTracing
from elsai.telemetry.job_spans import job_span_ids, job_step_span, record_job_run


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def _outcome(started_at: str) -> StepOutcome:
    return StepOutcome(
        status=Status.COMPLETED, orchestrator_id="pipeline", run_id="r1", started_at=started_at
    )


def test_ids_come_from_the_job_id_alone() -> None:
    assert job_span_ids("job-a") == job_span_ids("job-a")
    assert job_span_ids("job-a") != job_span_ids("job-b")
    trace_id, span_id = job_span_ids("job-a")
    assert 0 < trace_id < 2**128 and 0 < span_id < 2**64


def test_steps_recorded_by_separate_tracers_nest_under_the_run_span_recorded_last(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    for step in ("plan", "invoke_node writer", "fold"):  # each as if in a Lambda of its own
        with job_step_span(OtelTracing(provider), "job-a", step, {"elsai.step": step}):
            pass
    started = "2026-12-02T10:00:00Z"
    run = record_job_run(OtelTracing(provider), "job-a", "graph", _outcome(started), "completed")
    trace_id, span_id = job_span_ids("job-a")
    assert (run.context.trace_id, run.context.span_id, run.parent) == (trace_id, span_id, None)
    assert run.name == "invoke_graph pipeline" and run.attributes["elsai.run_id"] == "r1"
    assert run.start_time == int(datetime(2026, 12, 2, 10, tzinfo=UTC).timestamp() * 1e9)
    steps = [s for s in exporter.get_finished_spans() if s is not run and s.name != run.name]
    assert [s.name for s in steps] == ["plan", "invoke_node writer", "fold"]
    assert all(s.context.trace_id == trace_id and s.parent.span_id == span_id for s in steps)
    # the reserved ids were for that one span: the next one gets fresh ids
    with job_step_span(OtelTracing(provider), "job-a", "plan", {}) as later:
        assert later.context.span_id != span_id


def test_a_failed_run_is_an_error_span_and_an_unreadable_start_means_now(
    provider: TracerProvider,
) -> None:
    before = datetime.now(UTC).timestamp() * 1e9
    run = record_job_run(
        OtelTracing(provider), "job-b", "swarm", _outcome("garbage"), "failed", "node 'x' failed"
    )
    assert run.name == "invoke_swarm pipeline" and run.start_time >= before
    assert (
        run.status.status_code == StatusCode.ERROR and run.status.description == "node 'x' failed"
    )
    assert run.attributes["elsai.node.status"] == "failed"


class _OtherTracer:
    """A tracer that is not the SDK's: ids cannot be chosen."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def start_span(self, *args: Any, **kwargs: Any) -> Any:
        return self._real.start_span(*args, **kwargs)


class _OtherProvider:
    def __init__(self, real: TracerProvider) -> None:
        self._real = real

    def get_tracer(self, *args: Any, **kwargs: Any) -> Any:
        return _OtherTracer(self._real.get_tracer(*args, **kwargs))


def test_without_the_sdk_tracer_the_run_span_hangs_under_the_reserved_id(
    provider: TracerProvider,
) -> None:
    run = record_job_run(
        OtelTracing(_OtherProvider(provider)), "job-c", "graph", _outcome(""), "completed"
    )
    trace_id, span_id = job_span_ids("job-c")
    assert run.context.trace_id == trace_id and run.parent.span_id == span_id


def test_without_tracing_nothing_is_recorded() -> None:
    with job_step_span(None, "job-a", "plan", {}) as span:
        assert span is None
    assert record_job_run(None, "job-a", "graph", _outcome(""), "completed") is None
