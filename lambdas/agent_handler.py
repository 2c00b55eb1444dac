"""Agent slice Lambda: one Step Functions task = one slice of a durable agent job.

Input (from the state machine): ids only, never the transcript. Output: a small status the
state machine branches on ("completed" | "continue" | "interrupted"). The actions, request
and result models are `elsai.serverless.contract`'s. A crash or hard timeout
just fails this invocation; Step Functions retries it and the checkpoint resumes the agent.
"""

from __future__ import annotations

from elsai_lambdas.startup import quiet_gc

with quiet_gc():  # init's imports and objects, without collection passes (startup.py)
    import functools
    import os
    from typing import Any

    from aws_lambda_powertools import Logger, Metrics
    from aws_lambda_powertools.metrics import MetricUnit
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from elsai.serverless import DeadlinePolicy, load_factory, run_slice
    from elsai.serverless.contract import (
        FOLD,
        NODE_SLICE,
        PARK,
        PARK_NODES,
        PLAN,
        ParkNodesRequest,
        ParkRequest,
        ParkResult,
        SliceRequest,
        service_keys,
    )
    from elsai.serverless.scoped import job_credentials, job_storage_prefix
    from elsai.session import S3SessionManager
    from elsai_lambdas import snapstart
    from elsai_lambdas.xray_tracing import LazyTracer

    logger = Logger()
    metrics = Metrics()
    tracer = LazyTracer()  # the X-Ray SDK is imported only when tracing is on (xray_tracing.py)

    # Stop margin and default tool timeout (docs/operations.md, "Deadlines"): derived from the
    # model's read timeout unless ELSAI_SLICE_SAFETY_MARGIN_MS sets the margin outright.
    DEADLINE = DeadlinePolicy.from_env()


@functools.cache
def _otel_tracing() -> Any:
    """OpenTelemetry spans only with ELSAI_TRACING=otel (imported then, not at cold start)."""
    if os.environ.get("ELSAI_TRACING", "").lower() != "otel":
        return None
    from elsai.telemetry import OtelTracing

    return OtelTracing()


def _factory_path() -> str:
    factory = os.environ.get("ELSAI_AGENT_FACTORY")
    if not factory:
        raise RuntimeError("ELSAI_AGENT_FACTORY is not set (module:function of the agent factory)")
    return factory


def _bucket() -> str:
    bucket = os.environ.get("ELSAI_SESSIONS_BUCKET")
    if not bucket:
        raise RuntimeError("ELSAI_SESSIONS_BUCKET is not set")
    return bucket


def _session_manager(session_id: str, job_id: str) -> S3SessionManager:
    """The job's session, under its owner's storage prefix (tenant isolation; "" without)."""
    return S3SessionManager(
        session_id=session_id,
        bucket=_bucket(),
        prefix=job_storage_prefix(job_id),
        tagging=service_keys.object_tagging,  # parked tokens expire by age, under any owner
    )


@tracer.capture_method
def _run(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = SliceRequest.model_validate(event)
    logger.append_keys(
        execution_id=request.execution_id,
        job_id=request.job_id,
        session_id=request.session_id,
        agent_id=request.agent_id,
    )
    factory = load_factory(_factory_path())
    manager = _session_manager(request.session_id, request.job_id)
    tracing = _otel_tracing()
    try:
        result = run_slice(
            request,
            session_manager=manager,
            factory=factory,
            remaining_ms=context.get_remaining_time_in_millis,
            deadline=DEADLINE,
            tracing=tracing,
            span_attributes={"faas.invocation_id": context.aws_request_id},
        )
    finally:
        if tracing is not None:
            tracing.flush()
    metrics.add_metric(name="Slices", unit=MetricUnit.Count, value=1)
    metrics.add_metric(name="Cycles", unit=MetricUnit.Count, value=result.cycles)
    if result.resumed_from_checkpoint:
        metrics.add_metric(name="Resumes", unit=MetricUnit.Count, value=1)
        metrics.add_metric(
            name=f"ResumedFrom_{result.resume_position}", unit=MetricUnit.Count, value=1
        )
    logger.info(
        "slice finished",
        extra={
            "status": result.status,
            "stop_reason": result.stop_reason,
            "slice": result.slice,
            "resumed_from_checkpoint": result.resumed_from_checkpoint,
            "resume_position": result.resume_position,
        },
    )
    return result.model_dump()


@tracer.capture_method
def _park(event: dict[str, Any]) -> dict[str, Any]:
    request = ParkRequest.model_validate(event)
    logger.append_keys(job_id=request.job_id, session_id=request.session_id)
    manager = _session_manager(request.session_id, request.job_id)
    from elsai.serverless.parked import park_task_token  # only a job waiting on a person parks

    park_task_token(manager, request.job_id, request.task_token, request.interrupts)
    logger.info("job waiting for interrupt responses")
    return ParkResult().model_dump()


@tracer.capture_method
def _park_nodes(event: dict[str, Any]) -> dict[str, Any]:
    """Park a Graph/Swarm job on its nodes' waits (raises AnswersWaitingError if answered)."""
    from elsai.serverless.node_waits import park_nodes

    request = ParkNodesRequest.model_validate(event)
    logger.append_keys(job_id=request.job_id, session_id=request.session_id)
    manager = _session_manager(request.session_id, request.job_id)
    park_nodes(manager.storage, request.job_id, request.task_token)
    logger.info("graph/swarm job waiting for its nodes' interrupt responses")
    return ParkResult().model_dump()


@tracer.capture_method
def _orchestrate(action: str, event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Plan / node slice / fold of a Graph or Swarm job (elsai.serverless.orchestration).

    With tracing on, each step is a span under the job's run span (elsai.telemetry.job_spans).
    """
    from elsai.serverless.contract.node_steps import STEP_MODELS
    from elsai.telemetry.job_spans import job_step_span
    from elsai.telemetry.spans import record_node

    request: Any = STEP_MODELS[action].request.model_validate(event)
    node = getattr(request, "node", None)
    logger.append_keys(execution_id=request.execution_id, job_id=request.job_id,
                       session_id=request.session_id, node=node)  # fmt: skip
    factory = load_factory(_factory_path())  # first: its module may set the tracer provider
    tracing = _otel_tracing()
    name = f"invoke_node {node}" if action == NODE_SLICE else f"{action} {request.job_id}"
    attributes = {"elsai.execution_id": request.execution_id, "elsai.step": action,
                  "elsai.slice": getattr(request, "slice", 0), "faas.invocation_id": context.aws_request_id,
                  **({"elsai.node.name": node} if node else {})}  # fmt: skip
    try:
        with job_step_span(tracing, request.job_id, name, attributes) as span:
            result = _orchestrate_step(action, request, factory, context, tracing)
            if action == NODE_SLICE:
                record_node(span, result.status, result.resumed_from_checkpoint, result.error)
    finally:
        if tracing is not None:
            tracing.flush()
    logger.info(f"{action} finished", extra={"status": result.status})
    return result.model_dump()


def _orchestrate_step(
    action: str, request: Any, factory: Any, context: LambdaContext, tracing: Any
) -> Any:
    from elsai.serverless import orchestration

    manager = _session_manager(request.session_id, request.job_id)
    steps = orchestration.build_steps(
        request, session_manager=manager, factory=factory, deadline=DEADLINE,
        hooks=[tracing] if tracing is not None else None,
    )  # fmt: skip
    if action == PLAN:
        return orchestration.plan(request, steps, manager.storage, tracing)
    if action == FOLD:
        return orchestration.fold(request, steps, manager.storage, tracing)
    return orchestration.run_node_slice(
        request, steps, remaining_ms=context.get_remaining_time_in_millis, deadline=DEADLINE
    )


@logger.inject_lambda_context(log_event=False)
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    snapstart.check_runtime()  # once per process, before any work (a no-op after the first)
    # With a tenant role configured, everything below (the agent's tools, the session store)
    # runs with credentials scoped to this job's own objects (elsai.serverless.scoped).
    job_id, session_id = str(event.get("job_id") or ""), str(event.get("session_id") or "")
    with job_credentials(job_id, session_id, _bucket()):
        if event.get("action") == PARK:
            return _park(event)
        if event.get("action") == PARK_NODES:
            return _park_nodes(event)
        if event.get("action") in (PLAN, NODE_SLICE, FOLD):
            return _orchestrate(event["action"], event, context)
        return _run(event, context)


# Pre-initialized environments (SnapStart, provisioned concurrency) do the first invocation's
# one-time work now, inside the snapshot; on-demand cold starts leave it to first use.
if snapstart.pre_initialized():
    with quiet_gc():
        snapstart.warm_up(_factory_path(), _bucket())
