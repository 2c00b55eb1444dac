"""The routes of /jobs that start, describe, answer and upgrade a job, around `jobs_api.jobs`."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.api_gateway import Router

from elsai.serverless.contract.jobs_api import Answered, Job, StartedJob, Upgraded
from elsai.serverless.contract.jobs_api_requests import AnswerJob, StartJob
from elsai_lambdas.jobs_api import jobs
from elsai_lambdas.jobs_api.routing import Reply, route
from elsai_lambdas.jobs_api.telemetry import logger

router = Router()


@route(router, "startJob")
def start_job(body: StartJob, idempotency_key: str | None) -> Reply[StartedJob]:
    """Start an execution; a repeated Idempotency-Key with the same body starts nothing new."""
    started = jobs.start_job(
        body.prompt, body.session_id, body.agent_id, idempotency_key, body.version_policy
    )
    logger.info(
        "job accepted",
        extra={
            "job_id": started.job_id,
            "session_id": started.session_id,
            "replayed": started.replayed,
        },
    )
    out = StartedJob(job_id=started.job_id, session_id=started.session_id,
                     agent_id=started.agent_id, status=started.status)  # fmt: skip
    headers = {
        "Location": f"/jobs/{started.job_id}",
        "Idempotent-Replayed": str(started.replayed).lower(),
    }
    return Reply(out, headers)


@route(router, "getJob")
def get_job(job_id: str) -> Job:
    """Status; the result when SUCCEEDED, error and cause when it ended otherwise."""
    return Job.model_validate(jobs.describe_job(job_id))


@route(router, "answerJob")
def answer_job(job_id: str, body: AnswerJob) -> Answered:
    """Send the parked task token with the answers; each pending interrupt exactly once."""
    answered = jobs.answer_job(job_id, [r.model_dump() for r in body.responses])
    logger.info("interrupts answered", extra={"job_id": job_id, "answered": answered})
    return Answered(job_id=job_id, status="RUNNING", answered=answered)


@route(router, "upgradeJob")
def upgrade_job(job_id: str) -> Upgraded:
    """Move a running job to the current agent version at its next resume (409 if it ended)."""
    from elsai_lambdas.jobs_api import versions

    jobs.check_job_id(job_id)
    out = versions.upgrade_job(job_id, jobs.describe_execution(job_id))  # 404: no such job
    logger.info("job upgrade", extra={"job_id": job_id, "upgraded": out["upgraded"]})
    return Upgraded.model_validate(out)
