"""Spans around an agent: one per Graph/Swarm run and node, and one per serverless slice.

Both find their tracer on the agent: its `tracing` (an explicit `OtelTracing` hook, else the one
it attached because the application set a tracer provider). Without either they cost nothing
(no import, no span).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from elsai.telemetry.otel import OtelTracing, explicit_tracing


def tracing_of(executor: Any) -> OtelTracing | None:
    """The enabled OtelTracing an agent emits through, if any."""
    attach = getattr(executor, "attach_tracing", None)
    if attach is not None:
        tracing = attach()
    else:
        tracing = explicit_tracing(getattr(getattr(executor, "config", None), "hooks", ()))
    return tracing if tracing is not None and tracing.enabled else None


@contextmanager
def node_span(node: str, invocation_id: str, executor: Any) -> Iterator[Any]:
    """A span per orchestrator node; the node's `invoke_agent` span nests under it."""
    tracing = tracing_of(executor)
    if tracing is None:
        yield None
        return
    attributes = {"elsai.node.name": node, "elsai.node.invocation_id": invocation_id}
    with tracing.current_span(f"invoke_node {node}", attributes) as span:
        yield span


@contextmanager
def run_span(
    kind: str, orchestrator_id: str, run_id: str, executors: Iterable[Any]
) -> Iterator[Any]:
    """A span over a whole Graph or Swarm run in this process; its node spans nest under it.

    Its tracer is the first node's that has tracing on (an orchestrator has no hooks of its
    own); without one it costs nothing.
    """
    tracing = next((t for t in map(tracing_of, executors) if t is not None), None)
    if tracing is None:
        yield None
        return
    attributes = {f"elsai.{kind}.id": orchestrator_id, "elsai.run_id": run_id}
    with tracing.current_span(f"invoke_{kind} {orchestrator_id}", attributes) as span:
        yield span


def record_run(span: Any, status: str, error: str | None) -> None:
    """Put a run's outcome on its span (no-op without a span)."""
    record_node(span, status, False, error)


def record_node(span: Any, status: str, resumed: bool, error: str | None) -> None:
    """Put a node's outcome on its span (no-op without a span)."""
    if span is None:
        return
    span.set_attribute("elsai.node.status", status)
    span.set_attribute("elsai.resumed_from_checkpoint", resumed)
    if error:
        span.set_attribute("error.type", "node_failed")
        from opentelemetry.trace import Status, StatusCode

        span.set_status(Status(StatusCode.ERROR, error))


@contextmanager
def slice_span(
    tracing: OtelTracing | None, request: Any, extra: dict[str, Any] | None = None
) -> Iterator[Any]:
    """A span per serverless slice: job, execution, slice and attempt.

    Step Functions retries of one slice then show as several spans with the same job,
    execution and slice.
    """
    if tracing is None or not tracing.enabled:
        yield None
        return
    attributes: dict[str, Any] = {
        "elsai.job_id": request.job_id,
        "elsai.execution_id": request.execution_id,
        "elsai.session_id": request.session_id,
        "elsai.agent_id": request.agent_id,
        "elsai.slice": request.slice,
        **(extra or {}),
    }
    if request.attempt is not None:
        attributes["elsai.slice.attempt"] = request.attempt
    with tracing.current_span(f"run_slice {request.job_id}", attributes) as span:
        yield span


def record_slice(span: Any, result: Any) -> None:
    """Put a slice's outcome on its span (no-op without a span)."""
    if span is None:
        return
    span.set_attribute("elsai.slice.status", result.status)
    span.set_attribute("elsai.stop_reason", result.stop_reason)
    span.set_attribute("elsai.resumed_from_checkpoint", result.resumed_from_checkpoint)
    if result.resume_position is not None:
        span.set_attribute("elsai.resume_position", result.resume_position)
