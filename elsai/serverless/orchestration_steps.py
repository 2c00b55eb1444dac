"""The functions serving a Graph's or Swarm's steps: plan, node slice and fold.

Each rebuilds the job's orchestrator from the factory (`orchestration.build_steps`) and runs
its step (`orchestration.plan`, `run_node_slice`, `fold`). With tracing on, each step is a
span under the job's run span (`elsai.telemetry.job_spans`), whichever Lambda runs it. The
registry (`elsai.serverless.contract.steps`) names these functions; only a Graph or Swarm job
imports this module.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from elsai.multiagent.step_types import OrchestratorSteps
from elsai.serverless import orchestration
from elsai.serverless.contract import JobStepRequest
from elsai.serverless.contract.node_steps import (
    FoldRequest,
    NodeSliceRequest,
    NodeSliceResult,
    PlanResult,
)
from elsai.serverless.contract.steps import FOLD, NODE_SLICE, PLAN
from elsai.serverless.step_context import StepContext
from elsai.session.storage.base import StorageBackend
from elsai.telemetry.job_spans import job_step_span
from elsai.telemetry.otel import OtelTracing
from elsai.telemetry.spans import record_node

R = TypeVar("R", PlanResult, NodeSliceResult)
#: A step's work once its orchestrator is built: (steps, the job's storage, tracing) -> result.
Work = Callable[[OrchestratorSteps, StorageBackend, "OtelTracing | None"], R]


def serve_plan(request: JobStepRequest, context: StepContext) -> PlanResult:
    """The ``plan`` step: start or continue the run, name the nodes to run now."""
    return _run_step(PLAN, request, context, functools.partial(orchestration.plan, request))


def serve_fold(request: FoldRequest, context: StepContext) -> PlanResult:
    """The ``fold`` step: record the batch's node reports, name the next batch or the end."""
    return _run_step(FOLD, request, context, functools.partial(orchestration.fold, request))


def serve_node_slice(request: NodeSliceRequest, context: StepContext) -> NodeSliceResult:
    """The ``node_slice`` step: one slice of one node, stopped before the function's deadline."""

    def work(steps: OrchestratorSteps, *_: object) -> NodeSliceResult:
        return orchestration.run_node_slice(
            request, steps, remaining_ms=context.remaining_ms, deadline=context.deadline
        )

    return _run_step(NODE_SLICE, request, context, work, node=request.node)


def _run_step(
    action: str,
    request: JobStepRequest,
    context: StepContext,
    work: Work[R],
    node: str | None = None,
) -> R:
    """Build the orchestrator and run `work` inside the step's span; log how it ended."""
    factory = context.factory()  # first: its module may set the tracer provider
    tracing = context.tracing()
    name = f"invoke_node {node}" if node else f"{action} {request.job_id}"
    attributes: dict[str, Any] = {
        "elsai.execution_id": request.execution_id,
        "elsai.step": action,
        "elsai.slice": getattr(request, "slice", 0),
        "faas.invocation_id": context.invocation_id,
        **({"elsai.node.name": node} if node else {}),
    }
    with job_step_span(tracing, request.job_id, name, attributes) as span:
        manager = context.session_manager(request.session_id, request.job_id)
        steps = orchestration.build_steps(
            request,
            session_manager=manager,
            factory=factory,
            deadline=context.deadline,
            hooks=[tracing] if tracing is not None else None,
        )
        result = work(steps, manager.storage, tracing)
        if isinstance(result, NodeSliceResult):
            record_node(span, result.status, result.resumed_from_checkpoint, result.error)
    context.log(f"{action} finished", status=result.status)
    return result
