"""Jobs API Lambda (API Gateway REST, IAM-authorised) in front of the Standard state machine.

POST /jobs                    start a job (Idempotency-Key header → execution name)
GET  /jobs/{job_id}           status, result or error
POST /jobs/{job_id}/responses answer pending interrupts (sends the parked task token)
GET  /sessions/{session_id}   transcript summary and bookmark per agent

Every answer is JSON. Bad input gets a 4xx ``{"error": ...}`` body (400 for any malformed or
invalid request, 404/405 for routing misses, 409 for state conflicts, 413 for payloads over
Step Functions' cap); AWS throttling gets 503 + Retry-After; anything unexpected gets
``{"error": "internal error", "details": {"request_id": ...}}`` with 500, never a traceback.
"""

# No `from __future__ import annotations` here: Powertools resolves route signatures at run
# time through the Tracer's wrapper, whose globals are not this module's, so string
# annotations (e.g. the Idempotency-Key header's) would not resolve.

import binascii
import hashlib
import json
import os
import re
import uuid
from typing import Annotated, Any, TypeVar

from aws_lambda_powertools import Logger, Tracer
from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError, ServiceError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Header
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import ClientError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from elsai.aws_clients import shared_client
from elsai.serverless import executions
from elsai.session import keys

logger = Logger()
tracer = Tracer()
app = APIGatewayRestResolver(enable_validation=True)

MAX_PROMPT_CHARS = 100_000
MAX_SFN_PAYLOAD_BYTES = 256 * 1024  # Step Functions' cap on execution input and task output
MAX_ERROR_DETAILS = 10
_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,80}$")  # execution names this API creates
IdStr = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")]
# Routes (for 405 vs 404 on a miss); keep in step with the decorators below.
_ROUTES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^/jobs/?$"), "POST"),
    (re.compile(r"^/jobs/[^/]+/?$"), "GET"),
    (re.compile(r"^/jobs/[^/]+/responses/?$"), "POST"),
    (re.compile(r"^/sessions/[^/]+/?$"), "GET"),
]
_THROTTLED = {"ThrottlingException", "TooManyRequestsException", "SlowDown", "RequestLimitExceeded"}


class StartJob(BaseModel):
    """Body of POST /jobs."""

    model_config = ConfigDict(extra="forbid")
    prompt: str = Field(min_length=1, max_length=MAX_PROMPT_CHARS)
    session_id: IdStr | None = None
    agent_id: IdStr = "agent"

    @field_validator("session_id")
    @classmethod
    def _session_id(cls, value: str | None) -> str | None:
        # The storage layout's own rules on top of the pattern (e.g. no ".."); a ValueError
        # here becomes a 400 like any other validation error.
        return None if value is None else keys.validate_id(value, "session_id")

    @field_validator("agent_id")
    @classmethod
    def _agent_id(cls, value: str) -> str:
        keys.validate_id(value, "agent_id")
        return value


class InterruptResponse(BaseModel):
    """One answer: the Converse-style ``interruptResponse`` content."""

    model_config = ConfigDict(extra="forbid")
    interruptId: str = Field(min_length=1, max_length=256)  # noqa: N815 - Converse-style field name
    response: Any


class AnswerJob(BaseModel):
    """Body of POST /jobs/{job_id}/responses."""

    model_config = ConfigDict(extra="forbid")
    responses: list[InterruptResponse] = Field(min_length=1, max_length=100)


BodyModel = TypeVar("BodyModel", StartJob, AnswerJob)


class ApiError(Exception):
    """A deliberate 4xx answer, rendered as ``{"error": message}``."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}


def _sfn() -> Any:
    # Shared per process: a warm Lambda container answers many requests with one client.
    return shared_client("stepfunctions")


def _s3() -> Any:
    return shared_client("s3")


def _machine_arn() -> str:
    return os.environ["ELSAI_STATE_MACHINE_ARN"]


def _bucket() -> str:
    return os.environ["ELSAI_SESSIONS_BUCKET"]


def _check_job_id(job_id: str) -> str:
    if not _NAME_RE.match(job_id):
        raise ApiError(400, "job id must be 1-80 characters of letters, digits, '-' or '_'")
    return job_id


def _execution_arn(job_id: str) -> str:
    prefix, _, name = _machine_arn().rpartition(":stateMachine:")
    return f"{prefix}:execution:{name}:{_check_job_id(job_id)}"


def _job_name(idempotency_key: str | None) -> str:
    """A fresh execution name, or one derived from the client's Idempotency-Key."""
    if idempotency_key is None:
        return uuid.uuid4().hex
    if not 1 <= len(idempotency_key) <= 256:
        raise ApiError(400, "Idempotency-Key must be 1-256 characters")
    return "idem-" + hashlib.sha256(_utf8(idempotency_key, "Idempotency-Key")).hexdigest()[:48]


def _utf8(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:  # lone surrogates from "\ud800"-style JSON escapes
        raise ApiError(400, f"{what} is not valid Unicode (unpaired surrogate)") from exc


def _sfn_payload(data: Any, what: str) -> str:
    """JSON for Step Functions, refused early if it would break the 256 KiB cap."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    if len(_utf8(text, what)) > MAX_SFN_PAYLOAD_BYTES:
        raise ApiError(413, f"{what} is larger than Step Functions' 256 KiB limit once encoded")
    return text


def _error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


@app.post("/jobs")
@tracer.capture_method(capture_response=False)  # results carry prompts: keep them out of X-Ray
def start_job(
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
) -> Response[dict[str, Any]]:
    """Start an execution; a repeated Idempotency-Key with the same body starts nothing new."""
    body = _body(StartJob)
    job_id = _job_name(idempotency_key)
    session_id = body.session_id or job_id
    payload = {"session_id": session_id, "agent_id": body.agent_id, "prompt": body.prompt}
    job_input = _sfn_payload(payload, "the job input")
    # A keyed retry of a job that exists (running or not) is a replay; Step Functions itself
    # only de-duplicates a *running* execution with identical input.
    status = _replay_status(job_id, payload) if idempotency_key is not None else None
    replayed = status is not None
    if not replayed:
        try:
            _sfn().start_execution(stateMachineArn=_machine_arn(), name=job_id, input=job_input)
        except ClientError as exc:
            code = _error_code(exc)
            if code == "ExecutionAlreadyExists":  # lost a race with the same key
                status = _replay_status(job_id, payload)
                replayed = True
            elif code in ("InvalidExecutionInput", "InvalidName"):
                raise ApiError(400, f"Step Functions refused the job: {code}") from exc
            else:
                raise
    logger.info(
        "job accepted", extra={"job_id": job_id, "session_id": session_id, "replayed": replayed}
    )
    out = {
        "job_id": job_id,
        "session_id": session_id,
        "agent_id": body.agent_id,
        "status": status or "RUNNING",
    }
    headers = {"Location": f"/jobs/{job_id}", "Idempotent-Replayed": str(replayed).lower()}
    return Response(
        status_code=202, content_type=content_types.APPLICATION_JSON, body=out, headers=headers
    )


def _replay_status(job_id: str, payload: dict[str, Any]) -> str | None:
    """Status of job ``job_id`` if it exists with this input; 409 if with another; else None."""
    try:
        existing = _sfn().describe_execution(executionArn=_execution_arn(job_id))
    except ClientError as exc:
        if _error_code(exc) == "ExecutionDoesNotExist":
            return None
        raise
    if _loads(existing.get("input")) != payload:
        raise ApiError(409, "this Idempotency-Key was already used with a different request body")
    return str(_chain(job_id).current["status"])  # a handed-off job is still running


@app.get("/jobs/<job_id>")
@tracer.capture_method(capture_response=False)
def get_job(job_id: str) -> dict[str, Any]:
    """Status; the result when SUCCEEDED, error and cause when it ended otherwise.

    A long job spans several executions (hand-offs); this follows them and reports one job.
    """
    chain = _chain(job_id)
    out = executions.job_view(job_id, chain)
    if out["status"] == "RUNNING":
        parked = _parked(job_id)
        if parked is not None and _waiting_on(chain.current["executionArn"], parked):
            out["status"] = "WAITING_FOR_INPUT"
            out["interrupts"] = parked.get("interrupts") or []
    return out


def _chain(job_id: str) -> executions.JobChain:
    try:
        return executions.follow_job(_sfn(), _machine_arn(), _check_job_id(job_id))
    except executions.JobNotFoundError as exc:
        raise ApiError(404, f"no job {job_id!r}") from exc


@app.post("/jobs/<job_id>/responses")
@tracer.capture_method(capture_response=False)
def answer_job(job_id: str) -> dict[str, Any]:
    """Send the parked task token with the answers; each pending interrupt exactly once."""
    _check_job_id(job_id)
    body = _body(AnswerJob)
    parked = _parked(job_id)
    if parked is None:
        _describe(job_id)  # 404 for a job that does not exist
        raise ApiError(409, f"job {job_id!r} is not waiting for interrupt responses")
    responses = [r.model_dump() for r in body.responses]
    answered = [r["interruptId"] for r in responses]
    if len(set(answered)) != len(answered):
        raise ApiError(400, "each interruptId may be answered only once per request")
    interrupts = parked.get("interrupts") or []
    pending = {str(i["id"]) for i in interrupts if isinstance(i, dict) and i.get("id")}
    if pending and set(answered) != pending:
        current = _chain(job_id).current["executionArn"]
        if not _waiting_on(current, parked):  # a record left from an earlier wait
            raise ApiError(409, f"job {job_id!r} is not waiting for interrupt responses")
        missing, extra = sorted(pending - set(answered)), sorted(set(answered) - pending)
        raise ApiError(
            400, f"answer every pending interrupt exactly: missing {missing}, unknown {extra}"
        )
    output = _sfn_payload({"interrupt_responses": responses}, "the responses")
    try:
        _sfn().send_task_success(taskToken=parked["task_token"], output=output)
    except ClientError as exc:
        code = _error_code(exc)
        if code in ("TaskTimedOut", "InvalidToken", "TaskDoesNotExist"):
            raise ApiError(409, f"job {job_id!r} is no longer waiting for these responses") from exc
        if code == "InvalidOutput":
            raise ApiError(400, "Step Functions refused the responses as task output") from exc
        raise
    logger.info("interrupts answered", extra={"job_id": job_id, "answered": sorted(answered)})
    return {"job_id": job_id, "status": "RUNNING", "answered": sorted(answered)}


@app.get("/sessions/<session_id>")
@tracer.capture_method(capture_response=False)
def get_session(session_id: str) -> dict[str, Any]:
    """Agents, message counts, last message and checkpoint bookmark of a stored session."""
    try:
        keys.validate_id(session_id, "session_id")
    except ValueError as exc:
        raise ApiError(400, str(exc)) from exc
    from elsai.session.inspect import summarize_session
    from elsai.session.storage.s3 import S3Storage

    summary = summarize_session(S3Storage(bucket=_bucket(), client=_s3()), session_id)
    if summary is None:
        raise ApiError(404, f"no session {session_id!r}")
    return summary


def _body(model: type[BodyModel]) -> BodyModel:
    """The request body as ``model``: a JSON object, whatever the Content-Type says.

    Parsed here rather than by a Powertools ``Body()`` parameter, which would take the first
    element of a JSON array as the body (its form-data handling) and accept ``[{...}]``.
    """
    raw = app.current_event.decoded_body  # bad base64 / not UTF-8: see _undecodable
    try:
        return model.model_validate_json(raw or "")
    except ValidationError as exc:
        raise RequestValidationError(_in_body(exc)) from exc


def _in_body(exc: ValidationError) -> list[dict[str, Any]]:
    """pydantic's errors, located under ``body`` as Powertools reports its own."""
    found = exc.errors(include_url=False, include_input=False, include_context=False)
    return [{"type": e["type"], "loc": ("body", *e["loc"]), "msg": e["msg"]} for e in found]


def _describe(job_id: str) -> dict[str, Any]:
    try:
        execution: dict[str, Any] = _sfn().describe_execution(executionArn=_execution_arn(job_id))
    except ClientError as exc:
        if _error_code(exc) in ("ExecutionDoesNotExist", "InvalidArn"):
            raise ApiError(404, f"no job {job_id!r}") from exc
        raise
    return execution


def _loads(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text  # not JSON: hand it back as it is rather than fail the request


def _parked(job_id: str) -> dict[str, Any] | None:
    """The task-token record the agent's park step wrote, if any (it may be stale)."""
    try:
        obj = _s3().get_object(Bucket=_bucket(), Key=keys.job_token_key(job_id))
    except ClientError as exc:
        if _error_code(exc) in ("NoSuchKey", "404"):
            return None
        raise
    parked = json.loads(obj["Body"].read())
    return parked if isinstance(parked, dict) and parked.get("task_token") else None


def _waiting_on(execution_arn: str, parked: dict[str, Any]) -> bool:
    """Is the execution parked on *this* token now? (The record outlives its answer.)"""
    return executions.waiting_on_token(_sfn(), execution_arn, str(parked["task_token"]))


# -- error rendering: every answer is JSON -------------------------------------------------


def _error(
    status: int, message: str, details: Any = None, headers: dict[str, str] | None = None
) -> Response[dict[str, Any]]:
    body: dict[str, Any] = {"error": message}
    if details is not None:
        body["details"] = details
    return Response(
        status_code=status, content_type=content_types.APPLICATION_JSON, body=body, headers=headers
    )


def _clip(value: Any) -> Any:
    return value[:100] + "…" if isinstance(value, str) and len(value) > 100 else value


@app.exception_handler(RequestValidationError)
def _invalid(exc: RequestValidationError) -> Response[dict[str, Any]]:
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return _error(400, "request body is not valid JSON")
    problems = [
        {"loc": [_clip(p) for p in e.get("loc", ())], "msg": _clip(str(e.get("msg", "")))}
        for e in errors[:MAX_ERROR_DETAILS]
    ]
    return _error(400, "invalid request", problems)


@app.exception_handler([binascii.Error, UnicodeDecodeError])
def _undecodable(exc: Exception) -> Response[dict[str, Any]]:
    # Raised while Powertools decodes a base64 body (bad base64, or not UTF-8 underneath):
    # the body is at fault, not the service.
    return _error(400, "request body could not be decoded as JSON")


@app.exception_handler(ApiError)
def _api_error(exc: ApiError) -> Response[dict[str, Any]]:
    return _error(exc.status, exc.message, headers=exc.headers or None)


@app.exception_handler(ServiceError)
def _service_error(exc: ServiceError) -> Response[dict[str, Any]]:
    return _error(exc.status_code, str(exc.msg))


@app.not_found
def _no_route(exc: NotFoundError) -> Response[dict[str, Any]]:
    event = app.current_event
    allowed = sorted({method for pattern, method in _ROUTES if pattern.match(event.path)})
    if event.http_method in allowed:  # the route exists; its id has characters no id can have
        return _error(400, "the id in the path has characters that no job or session id can have")
    if allowed:
        return _error(
            405, f"{event.http_method} is not allowed here", headers={"Allow": ", ".join(allowed)}
        )
    return _error(404, f"no route {event.http_method} {_clip(event.path)}")


@app.exception_handler(Exception)
def _unexpected(exc: Exception) -> Response[dict[str, Any]]:
    request_id = (app.current_event.raw_event.get("requestContext") or {}).get("requestId")
    if isinstance(exc, ClientError) and _error_code(exc) in _THROTTLED:
        logger.warning("throttled by AWS", extra={"code": _error_code(exc)})
        return _error(503, "busy, retry later", headers={"Retry-After": "1"})
    logger.exception("unhandled error", extra={"request_id": request_id})
    return _error(500, "internal error", {"request_id": request_id})


@logger.inject_lambda_context(
    correlation_id_path=correlation_paths.API_GATEWAY_REST, log_event=False
)
@tracer.capture_lambda_handler(capture_response=False)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point (API Gateway REST proxy integration)."""
    return app.resolve(event, context)
