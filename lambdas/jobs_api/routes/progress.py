"""The routes of following jobs: list them, read a job's events, cancel a job."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.api_gateway import Router

from elsai.serverless import limits
from elsai.serverless.contract.jobs_api import Cancelled, EventPage, JobPage
from elsai_lambdas.jobs_api import cancel, events, jobs, listing
from elsai_lambdas.jobs_api.routing import route
from elsai_lambdas.jobs_api.telemetry import logger

router = Router()


@route(router, "listJobs")
def list_jobs(limit: str | None, after: str | None, status: str | None) -> JobPage:
    """The newest jobs first (`?limit=`, `?after=` the previous page's cursor, `?status=`)."""
    size = events.check_limit(limit, maximum=limits.MAX_JOBS_PAGE)
    return JobPage.model_validate(listing.list_jobs(size, after, status))


@route(router, "getEvents")
def get_events(job_id: str, after: str | None, limit: str | None) -> EventPage:
    """Events since `?after=<cursor>` (stored messages, slices, retries, resumes, interrupts)."""
    jobs.check_job_id(job_id)
    size = events.check_limit(limit)
    return EventPage.model_validate(events.job_events(job_id, after, size))


@route(router, "cancelJob")
def cancel_job(job_id: str) -> Cancelled:
    """Stop a running job; its session stays valid and the job reports CANCELLED."""
    jobs.check_job_id(job_id)
    out = cancel.cancel_job(job_id)
    logger.info("job cancelled", extra={"job_id": job_id})
    return Cancelled.model_validate(out)
