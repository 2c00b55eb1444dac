"""One slice of a durable agent job.

A slice is one Lambda invocation. It never carries the transcript: only ids go in and a small
status comes out. Everything else is recovered from the session store, so a Lambda that dies
anywhere is simply retried and the checkpoint resumes it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from elsai.agent.config import AgentConfig
from elsai.checkpoint.config import CheckpointConfig
from elsai.interrupt.model import interrupt_dict
from elsai.serverless.errors import checked_interrupts, model_access_guard
from elsai.serverless.factory import AgentFactory
from elsai.session import keys
from elsai.session.manager import SessionManager

MAX_TEXT_CHARS = 8_000  # keep Step Functions state far below its 256 KiB cap


class SliceRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    job_id: str = Field(min_length=1, max_length=80)
    execution_id: str = Field(min_length=1)
    session_id: str
    agent_id: str = "agent"
    prompt: str | None = None
    interrupt_responses: list[dict[str, Any]] | None = None
    slice: int = 0


class SliceResult(BaseModel):
    status: Literal["completed", "continue", "interrupted"]
    stop_reason: str
    text: str = ""
    interrupts: list[dict[str, Any]] = Field(default_factory=list)
    resumed_from_checkpoint: bool = False
    resume_position: str | None = None
    cycles: int = 0
    model_calls: int = 0  # this slice's; the state machine sums them for maxModelCalls
    slice: int = 0


def run_slice(
    request: SliceRequest,
    *,
    session_manager: SessionManager,
    factory: AgentFactory,
    remaining_ms: Callable[[], int],
    safety_margin_ms: int = 60_000,
) -> SliceResult:
    """Rebuild the agent, act on its bookmark, and stop at a boundary before the deadline."""
    keys.validate_id(request.session_id, "session_id")
    config = AgentConfig(
        agent_id=request.agent_id,
        session_manager=session_manager,
        checkpoint=CheckpointConfig(position="both"),
    )
    agent = factory(config)
    if agent.config.session_manager is not session_manager or agent.config.checkpoint is None:
        raise ValueError("the agent factory must build the Agent with the AgentConfig it was given")

    if request.interrupt_responses and agent._interrupts.active:
        prompt: Any = [{"interruptResponse": r} for r in request.interrupt_responses]
        invocation_id: str | None = f"{request.execution_id}#responses#{request.slice}"
    else:
        # The prompt is exactly-once per execution: a retried first slice resumes instead.
        # (Answers already consumed by a crashed attempt need no re-sending: the bookmark resumes.)
        prompt = request.prompt
        invocation_id = request.execution_id if request.prompt is not None else None

    with model_access_guard():  # no model access yet: a clear, non-retried job error
        result = agent(
            prompt,
            invocation_id=invocation_id,
            should_stop=lambda: remaining_ms() < safety_margin_ms,
        )
    status: Literal["completed", "continue", "interrupted"]
    if result.stop_reason == "paused":
        status = "continue"
    elif result.stop_reason == "interrupt":
        status = "interrupted"
    else:
        status = "completed"
    return SliceResult(
        status=status,
        stop_reason=result.stop_reason,
        text=str(result)[:MAX_TEXT_CHARS] if status == "completed" else "",
        interrupts=checked_interrupts([interrupt_dict(i) for i in result.interrupts]),
        resumed_from_checkpoint=result.resumed_from_checkpoint,
        resume_position=result.resume_position,
        cycles=result.metrics.cycles,
        model_calls=result.metrics.model_calls,
        slice=request.slice,
    )


def park_task_token(
    session_manager: SessionManager, job_id: str, task_token: str, interrupts: Any
) -> None:
    """Store the task token of a job waiting for human input where the API can find it."""
    keys.validate_id(job_id, "job_id")
    record = {
        "job_id": job_id,
        "task_token": task_token,
        "interrupts": interrupts or [],
        "parked_at": time.time(),
    }
    storage = session_manager.storage
    key = keys.job_token_key(job_id)
    current = storage.read(key)
    storage.replace(
        key, json.dumps(record).encode(), expected_version=current.version if current else None
    )
