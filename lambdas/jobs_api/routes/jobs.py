"""The HTTP contract of /jobs: bodies, headers and status codes around `jobs_api.jobs`."""

# No `from __future__ import annotations` here: Powertools resolves route signatures at run
# time through the Tracer's wrapper, whose globals are not this module's, so string
# annotations (e.g. the Idempotency-Key header's) would not resolve.

from typing import Annotated, Any, TypeVar

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Header
from pydantic import ValidationError

from elsai_lambdas.jobs_api import jobs
from elsai_lambdas.jobs_api.models import AnswerJob, StartJob
from elsai_lambdas.jobs_api.telemetry import logger, tracer

router = Router()

BodyModel = TypeVar("BodyModel", StartJob, AnswerJob)


@router.post("/jobs")
@tracer.capture_method(capture_response=False)  # results carry prompts: keep them out of X-Ray
def start_job(
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
) -> Response[dict[str, Any]]:
    """Start an execution; a repeated Idempotency-Key with the same body starts nothing new."""
    body = _body(StartJob)
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
    out = {
        "job_id": started.job_id,
        "session_id": started.session_id,
        "agent_id": started.agent_id,
        "status": started.status,
    }
    headers = {
        "Location": f"/jobs/{started.job_id}",
        "Idempotent-Replayed": str(started.replayed).lower(),
    }
    return Response(
        status_code=202, content_type=content_types.APPLICATION_JSON, body=out, headers=headers
    )


@router.get("/jobs/<job_id>")
@tracer.capture_method(capture_response=False)
def get_job(job_id: str) -> dict[str, Any]:
    """Status; the result when SUCCEEDED, error and cause when it ended otherwise."""
    return jobs.describe_job(job_id)


@router.post("/jobs/<job_id>/responses")
@tracer.capture_method(capture_response=False)
def answer_job(job_id: str) -> dict[str, Any]:
    """Send the parked task token with the answers; each pending interrupt exactly once."""
    jobs.check_job_id(job_id)  # a malformed id is reported before a malformed body
    body = _body(AnswerJob)
    answered = jobs.answer_job(job_id, [r.model_dump() for r in body.responses])
    logger.info("interrupts answered", extra={"job_id": job_id, "answered": answered})
    return {"job_id": job_id, "status": "RUNNING", "answered": answered}


@router.post("/jobs/<job_id>/upgrade")
@tracer.capture_method(capture_response=False)
def upgrade_job(job_id: str) -> dict[str, Any]:
    """Move a running job to the current agent version at its next resume (409 if it ended)."""
    from elsai_lambdas.jobs_api import versions

    jobs.check_job_id(job_id)
    out = versions.upgrade_job(job_id, jobs.describe_execution(job_id))  # 404: no such job
    logger.info("job upgrade", extra={"job_id": job_id, "upgraded": out["upgraded"]})
    return out


def _body(model: type[BodyModel]) -> BodyModel:
    """The request body as ``model``: a JSON object, whatever the Content-Type says.

    Parsed here rather than by a Powertools ``Body()`` parameter, which would take the first
    element of a JSON array as the body (its form-data handling) and accept ``[{...}]``.
    """
    raw = router.current_event.decoded_body  # bad base64 / not UTF-8: see app's _undecodable
    try:
        return model.model_validate_json(raw or "")
    except ValidationError as exc:
        raise RequestValidationError(_in_body(exc)) from exc


def _in_body(exc: ValidationError) -> list[dict[str, Any]]:
    """Pydantic's errors, located under ``body`` as Powertools reports its own."""
    found = exc.errors(include_url=False, include_input=False, include_context=False)
    return [{"type": e["type"], "loc": ("body", *e["loc"]), "msg": e["msg"]} for e in found]
