"""Jobs API Lambda (API Gateway REST, IAM-authorised) in front of the Standard state machine.

POST /jobs                    start a job (Idempotency-Key header → execution name)
GET  /jobs/{job_id}           status, result or error
POST /jobs/{job_id}/responses answer pending interrupts (sends the parked task token)
GET  /sessions/{session_id}   transcript summary and bookmark per agent

Bad input always gets a 4xx JSON body; nothing here answers with a traceback.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from typing import Annotated, Any

import boto3
from aws_lambda_powertools import Logger, Tracer
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import BadRequestError, NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Header, Path
from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict, Field

from elsai.session import keys

logger = Logger()
tracer = Tracer()
app = APIGatewayRestResolver(enable_validation=True)

_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
IdStr = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")]


class StartJob(BaseModel):
    model_config = ConfigDict(extra="forbid")
    prompt: str = Field(min_length=1, max_length=100_000)
    session_id: IdStr | None = None
    agent_id: IdStr = "agent"


class InterruptResponse(BaseModel):
    model_config = ConfigDict(extra="forbid")
    interruptId: str = Field(min_length=1, max_length=256)  # noqa: N815 - Converse-style field name
    response: Any


class AnswerJob(BaseModel):
    model_config = ConfigDict(extra="forbid")
    responses: list[InterruptResponse] = Field(min_length=1, max_length=100)


class ConflictError(Exception):
    """409: the request contradicts the job's current state."""


def _sfn() -> Any:
    return boto3.client("stepfunctions")


def _s3() -> Any:
    return boto3.client("s3")


def _machine_arn() -> str:
    return os.environ["ELSAI_STATE_MACHINE_ARN"]


def _bucket() -> str:
    return os.environ["ELSAI_SESSIONS_BUCKET"]


def _execution_arn(job_id: str) -> str:
    if not _NAME_RE.match(job_id):
        raise BadRequestError("job id must be 1-80 characters of letters, digits, '-' or '_'")
    prefix, _, name = _machine_arn().rpartition(":stateMachine:")
    return f"{prefix}:execution:{name}:{job_id}"


def _job_name(idempotency_key: str | None) -> str:
    if idempotency_key is None:
        return uuid.uuid4().hex
    if not 1 <= len(idempotency_key) <= 256:
        raise BadRequestError("Idempotency-Key must be 1-256 characters")
    return "idem-" + hashlib.sha256(idempotency_key.encode()).hexdigest()[:48]


@app.post("/jobs")
@tracer.capture_method
def start_job(body: StartJob, idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None) -> Response[dict[str, Any]]:
    job_id = _job_name(idempotency_key)
    session_id = body.session_id or job_id
    payload = {"session_id": session_id, "agent_id": body.agent_id, "prompt": body.prompt}
    try:
        _sfn().start_execution(stateMachineArn=_machine_arn(), name=job_id, input=json.dumps(payload))
    except ClientError as exc:
        if exc.response["Error"]["Code"] == "ExecutionAlreadyExists":
            raise ConflictError("this Idempotency-Key was already used with a different request body") from exc
        raise
    logger.info("job started", extra={"job_id": job_id, "session_id": session_id})
    body_out = {"job_id": job_id, "session_id": session_id, "agent_id": body.agent_id, "status": "RUNNING"}
    return Response(status_code=202, content_type=content_types.APPLICATION_JSON, body=body_out)


@app.get("/jobs/<job_id>")
@tracer.capture_method
def get_job(job_id: Annotated[str, Path(min_length=1, max_length=80)]) -> dict[str, Any]:
    try:
        execution = _sfn().describe_execution(executionArn=_execution_arn(job_id))
    except ClientError as exc:
        if exc.response["Error"]["Code"] in ("ExecutionDoesNotExist", "InvalidArn"):
            raise NotFoundError(f"no job {job_id!r}") from exc
        raise
    job_input = json.loads(execution.get("input") or "{}")
    out: dict[str, Any] = {
        "job_id": job_id,
        "status": execution["status"],
        "session_id": job_input.get("session_id"),
        "agent_id": job_input.get("agent_id"),
        "started_at": execution["startDate"].isoformat(),
    }
    if execution["status"] == "SUCCEEDED":
        out["result"] = json.loads(execution.get("output") or "null")
    elif execution["status"] in ("FAILED", "TIMED_OUT", "ABORTED"):
        out["error"] = {"error": execution.get("error"), "cause": execution.get("cause")}
    elif (parked := _parked(job_id)) is not None:
        out["status"] = "WAITING_FOR_INPUT"
        out["interrupts"] = parked.get("interrupts", [])
    return out


@app.post("/jobs/<job_id>/responses")
@tracer.capture_method
def answer_job(job_id: Annotated[str, Path(min_length=1, max_length=80)], body: AnswerJob) -> dict[str, Any]:
    _execution_arn(job_id)  # validates the id
    parked = _parked(job_id)
    if parked is None:
        raise ConflictError(f"job {job_id!r} is not waiting for interrupt responses")
    responses = [r.model_dump() for r in body.responses]
    pending = {i.get("id") for i in parked.get("interrupts", [])}
    answered = {r["interruptId"] for r in responses}
    if pending and answered != pending:
        raise BadRequestError(f"answer every pending interrupt exactly: expected {sorted(pending)}, got {sorted(answered)}")
    try:
        _sfn().send_task_success(taskToken=parked["task_token"], output=json.dumps({"interrupt_responses": responses}))
    except ClientError as exc:
        if exc.response["Error"]["Code"] in ("TaskTimedOut", "InvalidToken", "TaskDoesNotExist"):
            raise ConflictError(f"job {job_id!r} is no longer waiting for these responses") from exc
        raise
    return {"job_id": job_id, "status": "RUNNING", "answered": sorted(answered)}


@app.get("/sessions/<session_id>")
@tracer.capture_method
def get_session(session_id: Annotated[str, Path(min_length=1, max_length=128)]) -> dict[str, Any]:
    try:
        keys.validate_id(session_id, "session_id")
    except ValueError as exc:
        raise BadRequestError(str(exc)) from exc
    from elsai.session.inspect import summarize_session
    from elsai.session.storage.s3 import S3Storage

    summary = summarize_session(S3Storage(bucket=_bucket(), client=_s3()), session_id)
    if summary is None:
        raise NotFoundError(f"no session {session_id!r}")
    return summary


def _parked(job_id: str) -> dict[str, Any] | None:
    try:
        obj = _s3().get_object(Bucket=_bucket(), Key=keys.job_token_key(job_id))
    except ClientError as exc:
        if exc.response["Error"]["Code"] in ("NoSuchKey", "404"):
            return None
        raise
    parked: dict[str, Any] = json.loads(obj["Body"].read())
    return parked


@app.exception_handler(RequestValidationError)
def _invalid(exc: RequestValidationError) -> Response[dict[str, Any]]:
    problems = [{"loc": list(e.get("loc", ())), "msg": e.get("msg", "")} for e in exc.errors()]
    return _error(422, "invalid request", problems)


@app.exception_handler(ConflictError)
def _conflict(exc: ConflictError) -> Response[dict[str, Any]]:
    return _error(409, str(exc))


@app.exception_handler(ValueError)
def _bad_value(exc: ValueError) -> Response[dict[str, Any]]:
    return _error(400, str(exc))


def _error(status: int, message: str, details: Any = None) -> Response[dict[str, Any]]:
    body: dict[str, Any] = {"error": message}
    if details is not None:
        body["details"] = details
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=body)


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
