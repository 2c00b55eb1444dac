"""What every step of a job shares, and the one way a slice runs an agent.

Every step (slice, plan, node slice, fold) gets a `JobStepRequest` and asks the factory for
the job's agent or orchestrator with the `AgentConfig` of `step_config`. A slice, of a
single agent (`elsai.serverless.slice`) or of one node (`elsai.serverless.orchestration`),
then runs the agent once: `SliceInput` is what it sends and under which invocation id
(exactly-once), `run_agent` runs it and maps its stop reason to the state machine's status,
and `slice_fields` are the report fields both slice results carry.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple, TypedDict

from elsai.agent.agent import Agent
from elsai.agent.config import AgentConfig
from elsai.checkpoint.config import CheckpointConfig
from elsai.ids import validate_id
from elsai.interrupt.model import interrupt_dict
from elsai.models.base import Model
from elsai.serverless.contract import JobStepRequest
from elsai.serverless.deadline import DeadlinePolicy
from elsai.serverless.errors import MAX_INTERRUPTS_BYTES, checked_interrupts, model_access_guard
from elsai.session.manager import SessionManager
from elsai.types import AgentResult

#: How a slice's agent stopped (the part of the contract's statuses an agent run can report).
StopStatus = Literal["completed", "continue", "interrupted"]


def is_orchestrator(built: Any) -> bool:
    """Whether the factory built a Graph or Swarm (a `MultiAgentBase`) instead of an Agent.

    Building one imports `elsai.multiagent`, so while it is not imported nothing is one: a
    plain agent's Lambda never pays for importing Graph and Swarm.
    """
    base = sys.modules.get("elsai.multiagent.base")
    return base is not None and isinstance(built, base.MultiAgentBase)


def step_config(
    request: JobStepRequest,
    session_manager: SessionManager,
    policy: DeadlinePolicy,
    hooks: Sequence[Any] = (),
) -> AgentConfig:
    """The AgentConfig the factory gets at every step of the job.

    The job's session, checkpoints at both boundaries, and the deadline policy's hooks
    before `hooks`.
    """
    validate_id(request.session_id, "session_id")
    return AgentConfig(
        agent_id=request.agent_id,
        session_manager=session_manager,
        checkpoint=CheckpointConfig(position="both"),
        hooks=[*policy.hooks(), *hooks],
    )


def answer_blocks(
    agent: Agent, responses: list[dict[str, Any]] | None
) -> list[dict[str, Any]] | None:
    """The interrupt responses as input blocks, if the agent is waiting for answers (else None)."""
    if responses and agent.interrupts.active:
        return [{"interruptResponse": r} for r in responses]
    return None


def margin_ms(policy: DeadlinePolicy, model: Model, override: int | None) -> int:
    """How long before the Lambda deadline the slice stops: `override`, else the policy's."""
    return policy.stop_margin_ms(model) if override is None else override


class SliceInput(NamedTuple):
    """What a slice sends its agent, and the invocation id that makes it exactly-once."""

    prompt: Any
    invocation_id: str

    @classmethod
    def continuation(cls, invocation_id: str, slice_number: int) -> SliceInput:
        """No new input: the bookmark resumes.

        The id lets a retry of this slice (same number) take over the ownership lease its
        timed-out attempt left, instead of waiting for it to expire.
        """
        return cls(None, f"{invocation_id}#slice#{slice_number}")


def run_agent(
    agent: Agent,
    given: SliceInput,
    should_stop: Callable[[], bool],
    invocation_state: dict[str, Any] | None = None,
) -> tuple[StopStatus, AgentResult]:
    """Run the slice's invocation; paused → "continue", interrupt → "interrupted".

    Interrupts too large for the job's state are refused before the agent stores them.
    """
    agent.interrupts.max_pending_bytes = MAX_INTERRUPTS_BYTES
    with model_access_guard(agent.model):  # no model access: a clear, non-retried job error
        result = agent(
            given.prompt,
            invocation_id=given.invocation_id,
            invocation_state=invocation_state,
            should_stop=should_stop,
        )
    status: StopStatus = "completed"
    if result.stop_reason == "paused":
        status = "continue"
    elif result.stop_reason == "interrupt":
        status = "interrupted"
    return status, result


class SliceFields(TypedDict):
    """The report fields every slice result carries."""

    stop_reason: str
    interrupts: list[dict[str, Any]]
    resumed_from_checkpoint: bool
    resume_position: str | None
    model_calls: int


def slice_fields(result: AgentResult) -> SliceFields:
    """A slice's report of its agent's result (interrupts checked to fit the job's state)."""
    return {
        "stop_reason": result.stop_reason,
        "interrupts": checked_interrupts([interrupt_dict(i) for i in result.interrupts]),
        "resumed_from_checkpoint": result.resumed_from_checkpoint,
        "resume_position": result.resume_position,
        "model_calls": result.metrics.model_calls,
    }


__all__ = [
    "JobStepRequest",
    "SliceFields",
    "SliceInput",
    "StopStatus",
    "answer_blocks",
    "is_orchestrator",
    "margin_ms",
    "run_agent",
    "slice_fields",
    "step_config",
]
