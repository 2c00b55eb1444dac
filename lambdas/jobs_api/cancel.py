"""Cancelling a job: stop its execution and remember that a client asked for it.

Step Functions reports any stopped execution as ABORTED (an operator's StopExecution too), so
the API writes a small record (``status.CancelRecord``) under ``jobs/<job_id>/cancelled.json``
before it stops the execution; a job that is ABORTED *and* has a valid record reports CANCELLED.
Stopping never touches the session: the agent writes messages before its bookmark, so wherever
the slice is cut off, the store is one the next job on that session resumes from or safely falls
back from.
"""

import contextlib
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError

from elsai.errors import SessionConflictError
from elsai.serverless.contract import service_keys
from elsai_lambdas.jobs_api import aws, jobs
from elsai_lambdas.jobs_api.errors import Conflict, NotFound
from elsai_lambdas.jobs_api.status import CANCEL_ERROR, CancelRecord, public_status


def cancel_job(job_id: str) -> dict[str, Any]:
    """Stop a running job; Conflict if it already ended, NotFound if there is none."""
    execution = jobs.describe_execution(job_id)
    if execution["status"] != "RUNNING":
        raise Conflict(
            f"job {job_id!r} already ended with status {public_status(execution, job_id)}; "
            "only a running job can be cancelled"
        )
    record = CancelRecord(job_id=job_id, requested_at=datetime.now(UTC).replace(microsecond=0))
    _record_cancel(job_id, record.model_dump_json().encode())
    try:
        aws.sfn().stop_execution(
            executionArn=execution["executionArn"],
            error=CANCEL_ERROR,
            cause="cancelled through the jobs API",
        )
    except ClientError as exc:
        if aws.error_code(exc) == "ExecutionDoesNotExist":
            raise NotFound(f"no job {job_id!r}") from exc
        raise
    after = jobs.describe_execution(job_id)
    # RUNNING: the stop is accepted and the execution is winding down (moto's engine stops
    # asynchronously; AWS at once). Any other ending: it ended on its own between the calls.
    if after["status"] not in ("ABORTED", "RUNNING"):
        raise Conflict(
            f"job {job_id!r} ended with status {after['status']} before it could be cancelled"
        )
    out: dict[str, Any] = {"job_id": job_id, "status": "CANCELLED"}
    if after.get("stopDate") is not None:
        out["stopped_at"] = after["stopDate"].isoformat()
    return out


def _record_cancel(job_id: str, data: bytes) -> None:
    """Write the cancel record through the session store, like every other API write."""
    storage, key = aws.storage(), service_keys.job_cancel_key(job_id)
    current = storage.read(key)
    with contextlib.suppress(SessionConflictError):  # a concurrent cancel recorded it already
        storage.replace(key, data, expected_version=current.version if current else None)
