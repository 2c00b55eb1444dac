"""The HTTP contract of following jobs: list them, read a job's events, cancel a job."""

from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import Router

from elsai_lambdas.jobs_api import cancel, events, jobs, listing
from elsai_lambdas.jobs_api.errors import InvalidRequest
from elsai_lambdas.jobs_api.telemetry import logger, tracer

router = Router()


@router.get("/jobs")
@tracer.capture_method(capture_response=False)
def list_jobs() -> dict[str, Any]:
    """The newest jobs first (`?limit=`, `?after=` the previous page's cursor, `?status=`)."""
    query = _query({"after", "limit", "status"})
    limit = events.check_limit(query.get("limit"), maximum=listing.MAX_LIST)
    return listing.list_jobs(limit, query.get("after"), query.get("status"))


def _query(allowed: set[str]) -> dict[str, str]:
    """The query string, each parameter known and given at most once."""
    query = router.current_event.query_string_parameters or {}
    unknown = sorted(set(query) - allowed)
    if unknown:
        raise InvalidRequest(f"unknown query parameter(s) {unknown[:5]}; use {sorted(allowed)}")
    multi = router.current_event.multi_value_query_string_parameters or {}
    if any(len(multi.get(name) or []) > 1 for name in allowed):
        raise InvalidRequest(f"give each of {sorted(allowed)} at most once")
    if any(len(v) > events.MAX_CURSOR_CHARS for v in query.values()):
        raise InvalidRequest("a query parameter is too long")
    return dict(query)


@router.get("/jobs/<job_id>/events")
@tracer.capture_method(capture_response=False)  # events carry message text
def get_events(job_id: str) -> dict[str, Any]:
    """Events since `?after=<cursor>` (stored messages, slices, retries, resumes, interrupts)."""
    jobs.check_job_id(job_id)
    query = _query({"after", "limit"})
    limit = events.check_limit(query.get("limit"))
    return events.job_events(job_id, query.get("after"), limit)


@router.delete("/jobs/<job_id>")
@tracer.capture_method(capture_response=False)
def cancel_job(job_id: str) -> dict[str, Any]:
    """Stop a running job; its session stays valid and the job reports CANCELLED."""
    jobs.check_job_id(job_id)
    out = cancel.cancel_job(job_id)
    logger.info("job cancelled", extra={"job_id": job_id})
    return out
