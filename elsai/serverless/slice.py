"""One slice of a durable agent job.

A slice is one Lambda invocation. It never carries the transcript: only ids go in and a small
status comes out. Everything else is recovered from the session store, so a Lambda that dies
anywhere is simply retried and the checkpoint resumes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from elsai.agent import Agent
from elsai.agent.config import AgentConfig
from elsai.checkpoint.config import CheckpointConfig
from elsai.errors import AgentFactoryError
from elsai.interrupt.model import interrupt_dict
from elsai.serverless.contract import (
    COMPLETED,
    CONTINUE,
    INTERRUPTED,
    ORCHESTRATE,
    SliceRequest,
    SliceResult,
    SliceStatus,
)
from elsai.serverless.deadline import DeadlinePolicy
from elsai.serverless.errors import checked_interrupts, model_access_guard
from elsai.serverless.factory import AgentFactory
from elsai.serverless.limits import MAX_SLICE_TEXT_CHARS
from elsai.serverless.orchestration import is_orchestrator
from elsai.serverless.parked import park_task_token
from elsai.session import keys
from elsai.session.manager import SessionManager
from elsai.telemetry.otel import OtelTracing
from elsai.telemetry.spans import record_slice, slice_span

MAX_TEXT_CHARS = MAX_SLICE_TEXT_CHARS  # keep Step Functions state far below its 256 KiB cap

__all__ = ["MAX_TEXT_CHARS", "park_task_token", "run_slice"]


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
    keys.validate_id(request.session_id, "session_id")
    policy = deadline or DeadlinePolicy()
    config = AgentConfig(
        agent_id=request.agent_id,
        session_manager=session_manager,
        checkpoint=CheckpointConfig(position="both"),
        hooks=[*policy.hooks(), *([tracing] if tracing is not None else [])],
    )
    agent = factory(config)
    if is_orchestrator(agent):
        kind = type(agent).__name__.lower()  # "graph" | "swarm"
        return SliceResult(
            status=ORCHESTRATE, stop_reason="orchestrate", text=kind, slice=request.slice
        )
    if agent.config.session_manager is not session_manager or agent.config.checkpoint is None:
        raise AgentFactoryError(
            "the agent factory must build the Agent with the AgentConfig it was given "
            "(its session_manager and checkpoint settings); see lambdas/README.md"
        )

    prompt, invocation_id = _slice_input(request, agent)
    margin_ms = policy.stop_margin_ms(agent.model) if safety_margin_ms is None else safety_margin_ms
    with slice_span(tracing, request, span_attributes) as span:
        with model_access_guard():  # no model access yet: a clear, non-retried job error
            result = agent(
                prompt,
                invocation_id=invocation_id,
                should_stop=lambda: remaining_ms() < margin_ms,
            )
        outcome = _outcome(request, result)
        record_slice(span, outcome)
    return outcome


def _slice_input(request: SliceRequest, agent: Agent) -> tuple[Any, str]:
    """What this slice sends the agent, and the invocation id that makes it exactly-once."""
    if request.interrupt_responses and agent.interrupts.active:
        responses = [{"interruptResponse": r} for r in request.interrupt_responses]
        return responses, f"{request.execution_id}#responses#{request.slice}"
    # The prompt is exactly-once per execution: a retried first slice resumes instead.
    # (Answers already consumed by a crashed attempt need no re-sending: the bookmark resumes.)
    # A continuation slice gets an id too: a retry of it (same slice number) may take over
    # the ownership lease its timed-out attempt left, instead of waiting for it to expire.
    if request.prompt is not None:
        return request.prompt, request.execution_id
    return None, f"{request.execution_id}#slice#{request.slice}"


def _outcome(request: SliceRequest, result: Any) -> SliceResult:
    status: SliceStatus
    if result.stop_reason == "paused":
        status = CONTINUE
    elif result.stop_reason == "interrupt":
        status = INTERRUPTED
    else:
        status = COMPLETED
    return SliceResult(
        status=status,
        stop_reason=result.stop_reason,
        text=str(result)[:MAX_TEXT_CHARS] if status == COMPLETED else "",
        interrupts=checked_interrupts([interrupt_dict(i) for i in result.interrupts]),
        resumed_from_checkpoint=result.resumed_from_checkpoint,
        resume_position=result.resume_position,
        cycles=result.metrics.cycles,
        model_calls=result.metrics.model_calls,
        slice=request.slice,
    )
