"""Listing jobs: the newest executions of the jobs state machine, paged by Step Functions."""

from typing import Any

from botocore.exceptions import ClientError

from elsai.serverless.contract.jobs_api import LIST_STATUSES
from elsai_lambdas.jobs_api import aws, owner
from elsai_lambdas.jobs_api.errors import InvalidRequest
from elsai_lambdas.jobs_api.status import public_status


def list_jobs(limit: int, after: str | None, status: str | None) -> dict[str, Any]:
    """Up to `limit` jobs, newest first, and the cursor of the next page (None at the end).

    Under tenant isolation a page shows only the caller's own jobs, so it may hold fewer
    than `limit` (even none) while a cursor says more executions follow.
    """
    if status is not None and status not in LIST_STATUSES:
        raise InvalidRequest(f"status must be one of {', '.join(LIST_STATUSES)}")
    kwargs: dict[str, Any] = {"stateMachineArn": aws.machine_arn(), "maxResults": limit}
    if after:
        kwargs["nextToken"] = after
    if status:
        kwargs["statusFilter"] = status
    try:
        page = aws.sfn().list_executions(**kwargs)
    except ClientError as exc:
        if aws.error_code(exc) in ("InvalidToken", "ValidationException"):
            raise InvalidRequest("the cursor is not one this API handed out") from exc
        raise
    jobs = [
        {
            "job_id": e["name"],
            "status": public_status(e),
            "started_at": e["startDate"].isoformat(),
            **({"stopped_at": e["stopDate"].isoformat()} if e.get("stopDate") else {}),
        }
        for e in page.get("executions", [])
        if owner.may_see(e["name"])  # tenant isolation: only the caller's own jobs
    ]
    return {"jobs": jobs, "cursor": page.get("nextToken")}
