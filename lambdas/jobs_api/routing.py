"""A route function per row of the jobs API's table, registered by operation id.

``@route(router, "getJob")`` puts the function below on `router` at the row's method and path
(`elsai.serverless.contract.jobs_api.JobsApi`) and does the wire work the row describes, so a
route function holds only its logic:

- it is called with the row's parameters by name: path values, query values (None when
  absent; each given at most once, none longer than `MAX_CURSOR_CHARS`; unknown ones a 400
  where the row says ``unknown_query="reject"``), header values (each given at most once),
  and ``body``, the request parsed as the row's request model;
- it returns the row's response model (or a `Reply` of it with the row's response headers),
  validated here and sent with the row's status and media type. A route of a streaming row
  returns the Powertools `Response` it streams.

A function whose parameters differ from its row, a second function for a row, or an id the
table does not have fails at import; `ROUTED` lets the tests check that every row is served.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from elsai.serverless.contract.http import Operation
from elsai.serverless.contract.jobs_api import JobsApi
from elsai.serverless.limits import MAX_CURSOR_CHARS
from elsai_lambdas.jobs_api.errors import InvalidRequest
from elsai_lambdas.jobs_api.telemetry import tracer

OPERATIONS: dict[str, Operation] = {op.id: op for op in JobsApi.operations()}
#: Operation id -> the route function serving it (filled as the route modules are imported).
ROUTED: dict[str, Callable[..., Any]] = {}
M = TypeVar("M", bound=BaseModel)
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Reply(Generic[M]):
    """A response body with the response headers its row declares."""

    body: M
    headers: dict[str, str] = field(default_factory=dict)


def route(router: Router, operation_id: str) -> Callable[[F], F]:
    """Serve the table's row `operation_id` with the function below (see the module)."""
    op = OPERATIONS[operation_id]  # KeyError: no such row

    def register(fn: F) -> F:
        expected = {p.name for p in op.parameters} | ({"body"} if op.request else set())
        if set(inspect.signature(fn).parameters) != expected:
            raise TypeError(f"route {fn.__name__} for {op.id} must take {sorted(expected)}")
        if operation_id in ROUTED:
            raise TypeError(f"{op.id} is served by {ROUTED[operation_id].__name__} already")
        traced = tracer.capture_method(capture_response=False)(fn)  # bodies stay out of X-Ray

        def endpoint(**path: str) -> Response[Any]:
            arguments: dict[str, Any] = {**path, **_query(router, op), **_headers(router, op)}
            if op.request is not None:
                arguments["body"] = _body(router, op.request)
            return _respond(op, traced(**arguments))

        # Powertools reads the path parameters from this signature (and nothing else).
        endpoint.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, annotation=str)
             for p in op.of("path")]
        )  # fmt: skip
        endpoint.__name__, endpoint.__doc__ = fn.__name__, fn.__doc__
        router.route(_rule(op.path), op.method)(endpoint)
        ROUTED[operation_id] = fn
        return fn

    return register


def _rule(path: str) -> str:
    """Powertools' rule for a path template (``{job_id}`` -> ``<job_id>``)."""
    return path.replace("{", "<").replace("}", ">")


def _query(router: Router, op: Operation) -> dict[str, str | None]:
    """The row's query values: each known, given at most once and not too long."""
    event = router.current_event
    query = event.query_string_parameters or {}
    names = sorted(p.wire for p in op.of("query"))
    unknown = sorted(set(query) - set(names))
    if unknown and op.unknown_query == "reject":
        raise InvalidRequest(f"unknown query parameter(s) {unknown[:5]}; use {names}")
    multi = event.multi_value_query_string_parameters or {}
    if any(len(multi.get(name) or []) > 1 for name in names):
        raise InvalidRequest(f"give each of {names} at most once")
    if any(len(query.get(name) or "") > MAX_CURSOR_CHARS for name in names):
        raise InvalidRequest("a query parameter is too long")
    return {p.name: query.get(p.wire) for p in op.of("query")}


def _headers(router: Router, op: Operation) -> dict[str, str | None]:
    """The row's header values, each given at most once (names in any case)."""
    event = router.current_event
    multi = {k.lower(): v for k, v in (event.get("multiValueHeaders") or {}).items()}
    for p in op.of("header"):
        if len(multi.get(p.wire.lower()) or []) > 1:
            raise InvalidRequest(f"give the {p.wire} header at most once")
    return {p.name: event.headers.get(p.wire) for p in op.of("header")}


def _body(router: Router, model: type[M]) -> M:
    """The request body as ``model``: a JSON object, whatever the Content-Type says.

    Parsed here rather than by a Powertools ``Body()`` parameter, which would take the first
    element of a JSON array as the body (its form-data handling) and accept ``[{...}]``.
    """
    raw = router.current_event.decoded_body  # bad base64 / not UTF-8: see app's _undecodable
    try:
        return model.model_validate_json(raw or "")
    except ValidationError as exc:
        found = exc.errors(include_url=False, include_input=False, include_context=False)
        located = [{"type": e["type"], "loc": ("body", *e["loc"]), "msg": e["msg"]} for e in found]
        raise RequestValidationError(located) from exc  # located as Powertools reports its own


def _respond(op: Operation, out: Any) -> Response[Any]:
    """The route's answer on the wire, as the row says it is."""
    if op.streams:
        if not isinstance(out, Response):
            raise TypeError(f"{op.id} streams: its route returns the Response it streams")
        return out
    reply = out if isinstance(out, Reply) else Reply(out)
    if not isinstance(reply.body, op.response):
        raise TypeError(f"{op.id} answers a {op.response.__name__}, not {type(reply.body)}")
    if set(reply.headers) != set(op.headers):
        raise TypeError(f"{op.id} answers with headers {sorted(op.headers)}")
    body = reply.body.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return Response(op.status, op.media_type, body, reply.headers or None)
