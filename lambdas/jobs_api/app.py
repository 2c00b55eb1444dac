"""The one resolver of the jobs API, its routers, and how every failure becomes JSON.

The routes are the rows of the jobs API's table (`elsai.serverless.contract.jobs_api`), each
served by one function of `routes/` (`jobs_api.routing`); a path the table has with a method it
has not is a 405 naming the methods it has (``Allow``).

Every answer is JSON. Bad input gets a 4xx ``{"error": ...}`` body (400 for any malformed or
invalid request, 401 for a request without a caller identity when tenant isolation is on
(`jobs_api.owner`; another caller's job is a 404 like a missing one), 404/405 for routing
misses, 409 for state conflicts, 413 for payloads over Step Functions' cap); AWS throttling gets 503 + Retry-After; anything unexpected gets
``{"error": "internal error", "details": {"request_id": ...}}`` with 500, never a traceback.
"""

import binascii
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError, ServiceError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from botocore.exceptions import ClientError

from elsai.serverless.contract.http import allowed_methods
from elsai_lambdas.jobs_api import aws, owner
from elsai_lambdas.jobs_api.errors import (
    Conflict,
    CorruptSession,
    InvalidRequest,
    NotFound,
    RequestRefused,
    TooLarge,
    Unidentified,
)
from elsai_lambdas.jobs_api.routes import jobs as jobs_routes
from elsai_lambdas.jobs_api.routes import progress as progress_routes
from elsai_lambdas.jobs_api.routes import sessions as sessions_routes
from elsai_lambdas.jobs_api.routing import OPERATIONS
from elsai_lambdas.jobs_api.telemetry import logger, tracer

app = APIGatewayRestResolver(enable_validation=True)
app.use(middlewares=[owner.middleware])  # caller identity + job ownership (jobs_api.owner)
app.include_router(jobs_routes.router)
app.include_router(progress_routes.router)
app.include_router(sessions_routes.router)

MAX_ERROR_DETAILS = 10
_STATUS: dict[type[RequestRefused], int] = {
    InvalidRequest: 400,
    Unidentified: 401,
    NotFound: 404,
    Conflict: 409,
    TooLarge: 413,
    CorruptSession: 422,
}
_THROTTLED = {"ThrottlingException", "TooManyRequestsException", "SlowDown", "RequestLimitExceeded"}


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


@app.exception_handler(RequestRefused)
def _refused(exc: RequestRefused) -> Response[dict[str, Any]]:
    status = next(code for kind, code in _STATUS.items() if isinstance(exc, kind))
    if isinstance(exc, CorruptSession):
        body = {"error": exc.message, "session_id": exc.session_id, "problems": exc.problems}
        return Response(status, content_types.APPLICATION_JSON, body)
    return _error(status, exc.message)


@app.exception_handler(ServiceError)
def _service_error(exc: ServiceError) -> Response[dict[str, Any]]:
    return _error(exc.status_code, str(exc.msg))


@app.not_found
def _no_route(exc: NotFoundError) -> Response[dict[str, Any]]:
    event = app.current_event
    allowed = allowed_methods(tuple(OPERATIONS.values()), event.path)  # the table's routes
    if event.http_method in allowed:  # the route exists; its id has characters no id can have
        return _error(400, "the id in the path has characters that no job or session id can have")
    if allowed:
        return _error(
            405, f"{event.http_method} is not allowed here", headers={"Allow": ", ".join(allowed)}
        )
    return _error(404, f"no route {event.http_method} {_clip(event.path)}")


def _throttle_code(exc: BaseException | None) -> str | None:
    """The AWS throttling code behind `exc` (itself or a cause, e.g. under a StorageError)."""
    while exc is not None:
        if isinstance(exc, ClientError) and aws.error_code(exc) in _THROTTLED:
            return aws.error_code(exc)
        exc = exc.__cause__
    return None


@app.exception_handler(Exception)
def _unexpected(exc: Exception) -> Response[dict[str, Any]]:
    request_id = (app.current_event.raw_event.get("requestContext") or {}).get("requestId")
    code = _throttle_code(exc)
    if code is not None:
        logger.warning("throttled by AWS", extra={"code": code})
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
