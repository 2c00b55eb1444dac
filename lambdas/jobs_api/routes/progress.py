"""The HTTP contract of a running job's progress and its cancel: GET events, DELETE the job."""

from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import Router

from jobs_api import cancel, events, jobs
from jobs_api.errors import InvalidRequest
from jobs_api.telemetry import logger, tracer

router = Router()
_QUERY = frozenset({"after", "limit"})


@router.get("/jobs/<job_id>/events")
@tracer.capture_method(capture_response=False)  # events carry message text
def get_events(job_id: str) -> dict[str, Any]:
    """Events since `?after=<cursor>` (stored messages, slices, retries, resumes, interrupts)."""
    jobs.check_job_id(job_id)
    query = router.current_event.query_string_parameters or {}
    unknown = sorted(set(query) - _QUERY)
    if unknown:
        raise InvalidRequest(f"unknown query parameter(s) {unknown[:5]}; use 'after' and 'limit'")
    multi = router.current_event.multi_value_query_string_parameters or {}
    if any(len(multi.get(name) or []) > 1 for name in _QUERY):
        raise InvalidRequest("give 'after' and 'limit' at most once each")
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
