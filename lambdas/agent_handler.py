"""Agent Lambda: one Step Functions task = one step of a durable agent job.

Input (from the state machine): an ``action`` and ids, never the transcript. The action names
a step of the registry (`elsai.serverless.contract.steps`): the handler validates the event
with the step's request model and calls the step's function, which returns the small result
the machine branches on. A single-agent slice imports nothing of the other steps. A crash or
hard timeout just fails this invocation; Step Functions retries it and the checkpoint resumes
the agent.
"""

from elsai_lambdas.startup import quiet_gc

with quiet_gc():  # init's imports and objects, without collection passes (startup.py)
    import functools
    import os
    from typing import Any

    from aws_lambda_powertools import Logger, Metrics
    from aws_lambda_powertools.metrics import MetricUnit
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from elsai.serverless import DeadlinePolicy, load_factory
    from elsai.serverless.contract import service_keys
    from elsai.serverless.contract.steps import RUN_SLICE, Step, step
    from elsai.serverless.factory import AgentFactory
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


class _Invocation:
    """What this invocation gives a step (`elsai.serverless.step_context.StepContext`)."""

    def __init__(self, context: LambdaContext) -> None:
        self.deadline = DEADLINE
        self.invocation_id: str = context.aws_request_id
        self._context = context
        self._tracing: Any = None

    def session_manager(self, session_id: str, job_id: str) -> S3SessionManager:
        return _session_manager(session_id, job_id)

    def factory(self) -> AgentFactory:
        return load_factory(_factory_path())

    def remaining_ms(self) -> int:
        return int(self._context.get_remaining_time_in_millis())

    def tracing(self) -> Any:
        self._tracing = _otel_tracing()
        return self._tracing

    def count(self, metric: str, value: int = 1) -> None:
        metrics.add_metric(name=metric, unit=MetricUnit.Count, value=value)

    def log(self, message: str, **fields: Any) -> None:
        logger.info(message, extra=fields)

    def flush(self) -> None:
        """Export the spans this invocation made (nothing when tracing is off)."""
        if self._tracing is not None:
            self._tracing.flush()


#: The request fields a step's log lines carry, when its request has them.
_LOG_KEYS = ("execution_id", "job_id", "session_id", "agent_id", "node")


@tracer.capture_method
def _serve(served: Step, event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Validate the event with the step's request model and run the step's function."""
    tracer.put_annotation("action", served.action)
    request = served.request_model().model_validate(event)
    logger.append_keys(**{k: getattr(request, k) for k in _LOG_KEYS if hasattr(request, k)})
    invocation = _Invocation(context)
    try:
        result = served.serving_function()(request, invocation)
    finally:
        invocation.flush()
    expected = served.result_model()
    if not isinstance(result, expected):  # the machine reads the registered result's fields
        got = type(result).__name__
        raise TypeError(f"step {served.action!r} returned a {got}, not a {expected.__name__}")
    return result.model_dump()


@logger.inject_lambda_context(log_event=False)
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    snapstart.check_runtime()  # once per process, before any work (a no-op after the first)
    served = step(event.get("action", RUN_SLICE))  # an unknown action runs nothing
    # With a tenant role configured, everything below (the agent's tools, the session store)
    # runs with credentials scoped to this job's own objects (elsai.serverless.scoped).
    job_id, session_id = str(event.get("job_id") or ""), str(event.get("session_id") or "")
    with job_credentials(job_id, session_id, _bucket()):
        return _serve(served, event, context)


# Pre-initialized environments (SnapStart, provisioned concurrency) do the first invocation's
# one-time work now, inside the snapshot; on-demand cold starts leave it to first use.
if snapstart.pre_initialized():
    with quiet_gc():
        snapstart.warm_up(_factory_path(), _bucket())
