"""One trace per Graph/Swarm job whose steps run in many processes (serverless Lambdas).

No span stays open across Lambdas, and nothing extra travels in the job's state: every step
derives the job's trace id and its run span's id from the job id (`job_span_ids`), runs its
own span (plan, node, fold) as a child of that run span (`job_step_span`), and the step that
ends the run records the run span itself, from the run's start until now, under the reserved
ids (`record_job_run`). A trace backend then shows `invoke_graph <id>` (or `invoke_swarm`)
above every plan, node and fold span of the job, whichever Lambda ran them.

Without tracing these cost nothing and import nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from elsai.telemetry.otel import OtelTracing, remote_parent


def job_span_ids(job_id: str) -> tuple[int, int]:
    """The job's trace id (128 bits) and its run span's id (64 bits), derived from the job id.

    Never zero (an all-zero id is invalid in W3C trace context); distinct job ids give
    distinct traces.
    """
    digest = hashlib.sha256(f"elsai-job-trace:{job_id}".encode()).digest()
    trace_id = int.from_bytes(digest[:16], "big") or 1
    span_id = int.from_bytes(digest[16:24], "big") or 1
    return trace_id, span_id


@contextmanager
def job_step_span(
    tracing: OtelTracing | None, job_id: str, name: str, attributes: dict[str, Any]
) -> Iterator[Any]:
    """A span for one step of the job, current while the block runs, under the run span."""
    if tracing is None or not tracing.enabled:
        yield None
        return
    from opentelemetry import context

    token = context.attach(remote_parent(*job_span_ids(job_id)))
    try:
        with tracing.current_span(name, {"elsai.job_id": job_id, **attributes}) as span:
            yield span
    finally:
        context.detach(token)


def record_job_run(
    tracing: OtelTracing | None,
    job_id: str,
    kind: str,
    outcome: Any,
    status: str,
    error: str | None = None,
) -> Any:
    """Record the job's run span once its run has ended (a StepOutcome names the run).

    It starts when the run's cursor was created; returns the span (None without tracing).
    """
    if tracing is None or not tracing.enabled:
        return None
    attributes = {
        "elsai.job_id": job_id,
        f"elsai.{kind}.id": outcome.orchestrator_id,
        "elsai.run_id": outcome.run_id,
        "elsai.node.status": status,
    }
    name = f"invoke_{kind} {outcome.orchestrator_id}"
    ids = job_span_ids(job_id)
    return tracing.record_finished(name, ids, _start_ns(outcome.started_at), attributes, error)


def _start_ns(iso: str) -> int | None:
    """The run's start in ns since the epoch (None, meaning now, when it cannot be read)."""
    try:
        return int(datetime.fromisoformat(iso).timestamp() * 1e9)
    except ValueError:
        return None


__all__ = ["job_span_ids", "job_step_span", "record_job_run"]
