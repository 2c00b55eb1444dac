"""A job's status as clients see it: Step Functions' status, with CANCELLED told apart.

Step Functions reports any stopped execution as ABORTED; the API records a client's cancel
request first (``cancel.py``), so ABORTED with that record is CANCELLED. Everything that reports
a status (jobs, listing, events, cancel) builds on this module, which builds on none of them.
"""

from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, ValidationError

from elsai.serverless.contract import service_keys
from elsai_lambdas.jobs_api import aws
from elsai_lambdas.jobs_api.telemetry import logger

CANCEL_ERROR = "elsai.Cancelled"


class CancelRecord(BaseModel):
    """jobs/<job_id>/cancelled.json: a client asked the API to cancel this job.

    Stored data is untrusted (under tenant isolation a tool may write its own job's prefix),
    so a record that does not parse, or names another job, is no cancel request.
    """

    # Strict: a number is no timestamp (lax pydantic would read 0 as 1970).
    model_config = ConfigDict(extra="allow", strict=True)
    job_id: str
    requested_at: AwareDatetime


def load_cancel_record(job_id: str, data: bytes) -> CancelRecord | None:
    """The stored cancel record of `job_id`, or None (with a warning) if it is not a valid one."""
    try:
        record = CancelRecord.model_validate_json(data)
    except ValidationError as exc:
        logger.warning(
            "ignoring an unreadable cancel record",
            extra={"job_id": job_id, "errors": exc.error_count()},
        )
        return None
    if record.job_id != job_id:
        logger.warning("ignoring a cancel record of another job", extra={"job_id": job_id})
        return None
    return record


def is_cancelled(job_id: str) -> bool:
    """Whether the API recorded a (valid) cancel request for `job_id`."""
    stored = aws.storage().read(service_keys.job_cancel_key(job_id))
    return stored is not None and load_cancel_record(job_id, stored.data) is not None


def public_status(execution: dict[str, Any], job_id: str | None = None) -> str:
    """The execution's status as clients see it: ABORTED by a cancel request is CANCELLED.

    `job_id` names the job when the execution is a continuation of it.
    """
    status = str(execution["status"])
    if status == "ABORTED" and is_cancelled(job_id or str(execution.get("name") or "")):
        return "CANCELLED"
    return status
