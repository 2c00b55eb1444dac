"""One slice of a durable agent job.

A slice is one Lambda invocation. It never carries the transcript: only ids go in and a small
status comes out. Everything else is recovered from the session store, so a Lambda that dies
anywhere is simply retried and the checkpoint resumes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from elsai.agent import Agent
from elsai.errors import AgentFactoryError
from elsai.serverless.contract import COMPLETED, ORCHESTRATE, SliceRequest, SliceResult
from elsai.serverless.deadline import DeadlinePolicy
from elsai.serverless.factory import AgentFactory
from elsai.serverless.fingerprint import check_build, fingerprint_of
from elsai.serverless.limits import MAX_SLICE_TEXT_CHARS
from elsai.serverless.slice_core import (
    SliceInput,
    answer_blocks,
    is_orchestrator,
    margin_ms,
    run_agent,
    slice_fields,
    step_config,
)
from elsai.session.manager import SessionManager
from elsai.telemetry.otel import OtelTracing
from elsai.telemetry.spans import record_slice, slice_span

if TYPE_CHECKING:
    from elsai.serverless.step_context import StepContext

MAX_TEXT_CHARS = MAX_SLICE_TEXT_CHARS  # keep Step Functions state far below its 256 KiB cap

__all__ = ["MAX_TEXT_CHARS", "SliceRequest", "SliceResult", "run_slice", "serve_slice"]


def run_slice(
    request: SliceRequest,
    *,
    session_manager: SessionManager,
    factory: AgentFactory,
    remaining_ms: Callable[[], int],
    safety_margin_ms: int | None = None,
    deadline: DeadlinePolicy | None = None,
    tracing: OtelTracing | None = None,
    span_attributes: dict[str, Any] | None = None,
) -> SliceResult:
    """Rebuild the agent, act on its bookmark, and stop at a boundary before the deadline.

    The stop margin is `safety_margin_ms` if given, else derived by `deadline` (default:
    `DeadlinePolicy()`) from the built agent's model and the default tool timeout, which is
    applied to the agent's tools through a hook (see `elsai.serverless.deadline`).
    With `tracing` the agent gets it as a hook and the slice runs inside a `run_slice` span.
    """
    policy = deadline or DeadlinePolicy()
    config = step_config(request, session_manager, policy, [tracing] if tracing is not None else [])
    agent = factory(config)
    if is_orchestrator(agent):
        kind = type(agent).__name__.lower()  # "graph" | "swarm"
        return SliceResult(
            status=ORCHESTRATE, stop_reason=ORCHESTRATE, text=kind, slice=request.slice
        )
    if agent.config.session_manager is not session_manager or agent.config.checkpoint is None:
        raise AgentFactoryError(
            "the agent factory must build the Agent with the AgentConfig it was given "
            "(its session_manager and checkpoint settings); see docs/deploying.md, "
            "'Your own agent: the factory contract'"
        )

    if request.agent_function is not None:  # a deployed job: pinned to a published version
        built = fingerprint_of(agent, request.agent_function)
        check_build(session_manager.storage, request.job_id, built)
    given = _slice_input(request, agent)
    margin = margin_ms(policy, agent.model, safety_margin_ms)
    with slice_span(tracing, request, span_attributes) as span:
        status, result = run_agent(agent, given, should_stop=lambda: remaining_ms() < margin)
        outcome = SliceResult(
            status=status,
            text=str(result)[:MAX_TEXT_CHARS] if status == COMPLETED else "",
            cycles=result.metrics.cycles,
            slice=request.slice,
            **slice_fields(result),
        )
        record_slice(span, outcome)
    return outcome


def _slice_input(request: SliceRequest, agent: Agent) -> SliceInput:
    """What this slice sends the agent, and the invocation id that makes it exactly-once."""
    answers = answer_blocks(agent, request.interrupt_responses)
    if answers is not None:
        return SliceInput(answers, f"{request.execution_id}#responses#{request.slice}")
    # The prompt is exactly-once per execution: a retried first slice resumes instead.
    # (Answers already consumed by a crashed attempt need no re-sending: the bookmark resumes.)
    if request.prompt is not None:
        return SliceInput(request.prompt, request.execution_id)
    return SliceInput.continuation(request.execution_id, request.slice)


def serve_slice(request: SliceRequest, context: StepContext) -> SliceResult:
    """The ``run_slice`` step: one slice of the job's agent, with its metrics and log line."""
    factory = context.factory()
    manager = context.session_manager(request.session_id, request.job_id)
    result = run_slice(
        request,
        session_manager=manager,
        factory=factory,
        remaining_ms=context.remaining_ms,
        deadline=context.deadline,
        tracing=context.tracing(),
        span_attributes={"faas.invocation_id": context.invocation_id},
    )
    context.count("Slices")
    context.count("Cycles", result.cycles)
    if result.resumed_from_checkpoint:
        context.count("Resumes")
        context.count(f"ResumedFrom_{result.resume_position}")
    context.log(
        "slice finished",
        status=result.status,
        stop_reason=result.stop_reason,
        slice=result.slice,
        resumed_from_checkpoint=result.resumed_from_checkpoint,
        resume_position=result.resume_position,
    )
    return result
