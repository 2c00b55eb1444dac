"""HTTP operations as data: the shape every table of routes is written in, and its client side.

An API is a class of stub methods, one per operation, each under `operation(...)`: the stub's
signature says which arguments travel in the path, the query or a header (`path_param`,
`query_param`, `header_param` in ``Annotated``) and which form the JSON body (the others: the
request model's fields); its return annotation is the response model. The decorator turns
the stub into an `Operation` (the table row the handler's routes, the 405 answers, the
local server's matcher, the CDK resources and grants and the OpenAPI document are made from)
and into a method that, on an instance bound to a `Transport`, sends the request and returns
the response model, or raises `ApiError` for a refusal. So a client method is written once,
where the route is declared, and the same client runs over HTTP or in process.

No I/O and nothing heavy here: the API Lambda imports this at cold start.
"""

from __future__ import annotations

import functools
import inspect
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import (
    Any,
    Concatenate,
    Generic,
    Literal,
    ParamSpec,
    Protocol,
    TypeVar,
    get_args,
    get_origin,
    get_type_hints,
    overload,
)
from urllib.parse import quote, unquote

from pydantic import BaseModel

JSON = "application/json"
#: Server-sent events: a response that is a stream of messages rather than one body.
EVENT_STREAM = "text/event-stream"
Where = Literal["path", "query", "header"]
#: What a grant is on: the jobs state machine, its executions, the task tokens it hands out
#: (IAM names no resource for those), or objects of the sessions bucket (`Grant.keys`).
GrantTarget = Literal["state_machine", "executions", "task_tokens", "objects"]
#: The actions of a read grant on objects (what CDK's ``bucket.grant_read`` allows).
READ_ACTIONS = ("s3:GetObject*", "s3:GetBucket*", "s3:List*")
P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class Param:
    """Where a stub parameter travels: its place, wire name, JSON Schema and description."""

    where: Where
    schema: Mapping[str, Any]
    description: str
    wire_name: str | None = None  # a header's name; path and query use the argument's


def path_param(schema: Mapping[str, Any], description: str) -> Param:
    """An argument that fills ``{name}`` in the path template (always required)."""
    return Param("path", schema, description)


def query_param(schema: Mapping[str, Any], description: str) -> Param:
    """An argument sent as ``?name=`` (left out when None)."""
    return Param("query", schema, description)


def header_param(name: str, schema: Mapping[str, Any], description: str) -> Param:
    """An argument sent as header `name` (left out when None)."""
    return Param("header", schema, description, name)


@dataclass(frozen=True)
class Parameter:
    """One non-body parameter of an operation, as the wire sees it."""

    name: str  # the argument's name (and the route function's keyword)
    where: Where
    wire: str  # the name on the wire (a header's may differ)
    schema: Mapping[str, Any]
    description: str
    required: bool


@dataclass(frozen=True)
class Grant:
    """IAM actions the API's role needs for an operation, on one kind of resource."""

    actions: tuple[str, ...]
    on: GrantTarget
    #: For objects: S3 key patterns (under an owner's prefix too, with tenant isolation).
    keys: tuple[str, ...] = ()


def reads(*prefixes: str) -> Grant:
    """Read objects under these key patterns."""
    return Grant(READ_ACTIONS, "objects", prefixes)


def puts(*keys: str) -> Grant:
    """Create or replace objects matching these key patterns (never delete)."""
    return Grant(("s3:PutObject",), "objects", keys)


@dataclass(frozen=True)
class Operation:
    """One row of an API's table: everything the wire and the deployment say about a route."""

    id: str  # the OpenAPI operationId
    method: str
    path: str  # template, e.g. ``/jobs/{job_id}``
    name: str  # the client method
    summary: str
    description: str
    parameters: tuple[Parameter, ...]
    body_fields: tuple[str, ...]  # the arguments that form the JSON body (the model's fields)
    request: type[BaseModel] | None
    response: type[BaseModel]  # the 2xx body (or each message of a stream)
    status: int
    errors: tuple[int, ...]  # error statuses beyond those every operation may answer
    grants: tuple[Grant, ...]
    media_type: str = JSON
    #: Response headers: name -> (JSON Schema, description); the route must set each.
    headers: Mapping[str, tuple[Mapping[str, Any], str]] = field(default_factory=dict)
    #: OpenAPI links for stateful clients: name -> (operation id, parameter expressions).
    links: Mapping[str, tuple[str, Mapping[str, str]]] = field(default_factory=dict)
    #: An unknown query parameter: refused with a 400 ("reject") or left alone ("ignore").
    unknown_query: Literal["reject", "ignore"] = "ignore"

    @property
    def streams(self) -> bool:
        """Whether the response is a stream of messages (server-sent events)."""
        return self.media_type == EVENT_STREAM

    def of(self, where: Where) -> tuple[Parameter, ...]:
        """The parameters that travel in `where`."""
        return tuple(p for p in self.parameters if p.where == where)

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        """The concrete paths of this template (one segment per parameter, optional slash)."""
        parts = re.split(r"(\{\w+\})", self.path.rstrip("/"))
        body = "".join("([^/]+)" if p.startswith("{") else re.escape(p) for p in parts if p)
        return re.compile(f"^{body}/?$")

    def path_values(self, path: str) -> dict[str, str] | None:
        """The path parameters of `path` (percent-decoded), or None if it is not this route's."""
        found = self.pattern.match(path)
        if found is None:
            return None
        names = re.findall(r"\{(\w+)\}", self.path)
        return {n: unquote(v) for n, v in zip(names, found.groups(), strict=True)}

    def url_path(self, values: Mapping[str, Any]) -> str:
        """The template filled with `values`, each percent-encoded as one segment."""
        return re.sub(r"\{(\w+)\}", lambda m: quote(str(values[m.group(1)]), safe=""), self.path)


def resource_of(operations: tuple[Operation, ...], path: str) -> tuple[str, dict[str, str]] | None:
    """The path template `path` falls under and its parameters; None if no route has it."""
    for op in operations:
        values = op.path_values(path)
        if values is not None:
            return op.path, values
    return None


def allowed_methods(operations: tuple[Operation, ...], path: str) -> list[str]:
    """The methods the routes of `path` answer, sorted (a 405's ``Allow``); [] if none."""
    return sorted({op.method for op in operations if op.pattern.match(path)})


class ApiError(Exception):
    """The API refused a request (4xx) or failed (5xx): its status and its JSON body."""

    def __init__(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        """Keep the status, the body and the response headers (e.g. ``Retry-After``)."""
        message = body.get("error") if isinstance(body, dict) else None
        self.status, self.body = status, body
        self.headers = dict(headers or {})
        self.message = str(message or body)
        super().__init__(f"HTTP {status}: {self.message}")


@dataclass(frozen=True)
class Request:
    """One request as a client sends it: `path` is concrete and already percent-encoded."""

    method: str
    path: str
    query: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    operation: Operation | None = None  # the table row it was made from


@dataclass(frozen=True)
class Reply:
    """One response: status, headers and the raw body."""

    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        """The body parsed as JSON (its text when it is not JSON; None when empty)."""
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            return self.body.decode("utf-8", "replace")


class Transport(Protocol):
    """Carries a request to the API and brings back its reply, whatever the status."""

    def send(self, request: Request) -> Reply:
        """One round trip; only a failure to reach the API raises."""
        ...


class Api:
    """An API's operations (its `operation` stubs) bound to a transport."""

    def __init__(self, transport: Transport) -> None:
        """Calls go through `transport` (HTTP, or the handler in process)."""
        self.transport = transport

    @classmethod
    def operations(cls) -> tuple[Operation, ...]:
        """The table: every operation of this API, in declaration order."""
        found: dict[str, Operation] = {}
        for klass in reversed(cls.__mro__):
            for value in vars(klass).values():
                if isinstance(value, Endpoint):
                    found[value.operation.name] = value.operation
        return tuple(found.values())

    def call(self, op: Operation, arguments: Mapping[str, Any]) -> Any:
        """Send `op` with `arguments`; the response model, or ApiError for a 4xx/5xx."""
        if op.streams:
            raise NotImplementedError(f"{op.id} answers a stream: read it with a streaming client")
        reply = self.transport.send(request_of(op, arguments))
        body = reply.json()
        if reply.status >= 400:
            raise ApiError(reply.status, body, reply.headers)
        return op.response.model_validate(body)


def request_of(op: Operation, arguments: Mapping[str, Any]) -> Request:
    """The request `op` makes of `arguments` (None leaves a query, header or body field out)."""
    query = {
        p.wire: str(arguments[p.name]) for p in op.of("query") if arguments[p.name] is not None
    }
    headers = {
        p.wire: str(arguments[p.name]) for p in op.of("header") if arguments[p.name] is not None
    }
    body = None
    if op.request is not None:
        fields = {n: arguments[n] for n in op.body_fields if arguments[n] is not None}
        body = json.dumps(fields, ensure_ascii=False).encode()
    return Request(op.method, op.url_path(arguments), query, headers, body, op)


class Endpoint(Generic[P, R]):
    """A stub turned into a table row (`operation`) and, on an `Api` instance, a call."""

    def __init__(self, stub: Callable[Concatenate[Any, P], R], operation: Operation) -> None:
        """Keep the stub's signature to bind call arguments by name."""
        self.operation = operation
        self._stub = stub
        self._signature = inspect.signature(stub)

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> Endpoint[P, R]: ...

    @overload
    def __get__(self, instance: Api, owner: type[Any]) -> Callable[P, R]: ...

    def __get__(self, instance: Api | None, owner: type[Any]) -> Any:
        """On the class: the endpoint itself; on an instance: the bound call."""
        if instance is None:
            return self

        @functools.wraps(self._stub)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            bound = self._signature.bind(instance, *args, **kwargs)
            bound.apply_defaults()
            result: R = instance.call(self.operation, bound.arguments)
            return result

        return call


def operation(
    method: str, path: str, operation_id: str, *, summary: str, status: int = 200,
    errors: tuple[int, ...] = (), grants: tuple[Grant, ...] = (),
    request: type[BaseModel] | None = None, media_type: str = JSON,
    headers: Mapping[str, tuple[Mapping[str, Any], str]] | None = None,
    links: Mapping[str, tuple[str, Mapping[str, str]]] | None = None,
    unknown_query: Literal["reject", "ignore"] = "ignore",
) -> Callable[[Callable[Concatenate[Any, P], R]], Endpoint[P, R]]:  # fmt: skip
    """Declare the stub below as operation `operation_id`: ``METHOD path`` (see the module)."""

    def declare(stub: Callable[Concatenate[Any, P], R]) -> Endpoint[P, R]:
        hints = get_type_hints(stub, include_extras=True)
        parameters, body_fields = _parameters(stub, hints)
        response = hints["return"]
        if get_origin(response) is Iterator:  # a stream: the model of each message
            (response,) = get_args(response)
        description = inspect.getdoc(stub) or ""
        op = Operation(
            id=operation_id, method=method.upper(), path=path, name=stub.__name__,
            summary=summary, description=description, parameters=parameters,
            body_fields=body_fields, request=request, response=response, status=status,
            errors=errors, grants=grants, media_type=media_type, headers=dict(headers or {}),
            links=dict(links or {}), unknown_query=unknown_query,
        )  # fmt: skip
        _check(op)
        return Endpoint(stub, op)

    return declare


def _parameters(
    stub: Callable[..., Any], hints: dict[str, Any]
) -> tuple[tuple[Parameter, ...], tuple[str, ...]]:
    """The stub's wire parameters (``Annotated`` with a `Param`) and its body fields (the rest)."""
    parameters: list[Parameter] = []
    body: list[str] = []
    for name, sig in list(inspect.signature(stub).parameters.items())[1:]:  # after self
        marks = [m for m in getattr(hints[name], "__metadata__", ()) if isinstance(m, Param)]
        if not marks:
            body.append(name)
            continue
        (mark,) = marks
        required = mark.where == "path" or sig.default is inspect.Parameter.empty
        wire = mark.wire_name or name
        parameters.append(
            Parameter(name, mark.where, wire, mark.schema, mark.description, required)
        )
    return tuple(parameters), tuple(body)


def _check(op: Operation) -> None:
    """A row that cannot work fails at import: path names, body fields and the model agree."""
    in_path = re.findall(r"\{(\w+)\}", op.path)
    declared = [p.name for p in op.of("path")]
    if sorted(in_path) != sorted(declared):
        raise TypeError(f"{op.id}: the path names {in_path}, the stub declares {declared}")
    fields = set(op.request.model_fields) if op.request is not None else set()
    if set(op.body_fields) != fields:
        raise TypeError(
            f"{op.id}: body arguments {sorted(op.body_fields)} differ from the request "
            f"model's fields {sorted(fields)}"
        )


__all__ = [
    "EVENT_STREAM",
    "JSON",
    "READ_ACTIONS",
    "Api",
    "ApiError",
    "Endpoint",
    "Grant",
    "Operation",
    "Param",
    "Parameter",
    "Reply",
    "Request",
    "Transport",
    "allowed_methods",
    "header_param",
    "operation",
    "path_param",
    "puts",
    "query_param",
    "reads",
    "request_of",
    "resource_of",
]
