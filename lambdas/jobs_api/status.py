"""A job's status as clients see it: Step Functions' status, with CANCELLED told apart.

Step Functions reports any stopped execution as ABORTED; the API records a client's cancel
request first (``cancel.py``), so ABORTED with that record is CANCELLED. Everything that reports
a status (jobs, listing, events, cancel) builds on this module, which builds on none of them.
"""

from typing import Any

from elsai.session.layout import keys
from elsai_lambdas.jobs_api import aws

CANCEL_ERROR = "elsai.Cancelled"


def is_cancelled(job_id: str) -> bool:
    """Whether the API recorded a cancel request for `job_id`."""
    return aws.storage().read(keys.job_cancel_key(job_id)) is not None


def public_status(execution: dict[str, Any], job_id: str | None = None) -> str:
    """The execution's status as clients see it: ABORTED by a cancel request is CANCELLED.

    `job_id` names the job when the execution is a continuation of it.
    """
    status = str(execution["status"])
    if status == "ABORTED" and is_cancelled(job_id or str(execution.get("name") or "")):
        return "CANCELLED"
    return status
