"""The parked task-token record: how a job waiting for human input is found again.

When a slice stops on interrupts, the state machine's `waitForTaskToken` task hands the
agent Lambda a task token; `park_task_token` stores it with the pending interrupts, and the
jobs API reads it back to report WAITING_FOR_INPUT and to send the answers. Both sides use
this one model and the one key from `elsai.serverless.contract.service_keys.job_token_key`.

A Graph or Swarm job keeps its nodes' waits apart instead (`elsai.serverless.node_waits`).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from elsai.ids import validate_id
from elsai.serverless.contract import ParkRequest, ParkResult, service_keys

if TYPE_CHECKING:
    from elsai.serverless.step_context import StepContext
    from elsai.session.manager import SessionManager
    from elsai.session.storage.base import StorageBackend


class ParkedTaskToken(BaseModel):
    """One job's parked Step Functions task token and the interrupts it waits on.

    The record outlives its answer (the API may only read the bucket), so a reader must
    check that the execution still waits on `task_token` before trusting it.
    """

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="ignore", frozen=True, defer_build=True)

    job_id: str = Field(min_length=1)
    task_token: str = Field(min_length=1)
    interrupts: list[dict[str, Any]] = Field(default_factory=list)
    parked_at: float = 0.0

    @field_validator("interrupts", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        # The state machine passes whatever the slice reported; "no interrupts" may be null.
        return [] if value is None else value

    def pending_ids(self) -> set[str]:
        """Ids of the interrupts this wait expects answers for."""
        return {str(i["id"]) for i in self.interrupts if i.get("id")}


def park_task_token(
    session_manager: SessionManager,
    job_id: str,
    task_token: str,
    interrupts: Any,
) -> ParkedTaskToken:
    """Store the task token of a job waiting for human input."""
    validate_id(job_id, "job_id")
    record = ParkedTaskToken(
        job_id=job_id, task_token=task_token, interrupts=interrupts, parked_at=time.time()
    )
    storage = session_manager.storage
    key = service_keys.job_token_key(job_id)
    current = storage.read(key)
    storage.replace(
        key,
        record.model_dump_json().encode(),
        expected_version=current.version if current else None,
    )
    return record


def serve_park(request: ParkRequest, context: StepContext) -> ParkResult:
    """The ``park`` step: store the token the machine's task waits on until the API answers."""
    manager = context.session_manager(request.session_id, request.job_id)
    park_task_token(manager, request.job_id, request.task_token, request.interrupts)
    context.log("job waiting for interrupt responses")
    return ParkResult()


def read_parked_token(storage: StorageBackend, job_id: str) -> ParkedTaskToken | None:
    """The record `park_task_token` wrote for `job_id`, or None if none.

    The record may be stale (already answered); a record that is not one at all is an
    error naming its key, never silently "not waiting".
    """
    return _parse(storage, service_keys.job_token_key(validate_id(job_id, "job_id")))


def _parse(storage: StorageBackend, key: str) -> ParkedTaskToken | None:
    stored = storage.read(key)
    if stored is None:
        return None
    try:
        raw = json.loads(stored.data)
    except ValueError as exc:
        raise ValueError(f"parked task-token record {storage.describe(key)} is not JSON") from exc
    if isinstance(raw, dict) and not raw.get("task_token"):
        return None  # nothing to send: treated as never parked
    try:
        return ParkedTaskToken.model_validate(raw)
    except ValidationError as exc:
        raise ValueError(
            f"parked task-token record {storage.describe(key)} is invalid: {exc}"
        ) from exc
