"""The jobs API's OpenAPI document, made from its table (`jobs_api.JobsApi`) and nothing else.

Every operation of the table becomes one: its parameters with their schemas (the limits of
`elsai.serverless.limits`), its request body (the model the handler validates with), its 2xx
answer (the response model, headers and links for stateful clients), every error status it
may answer with the ``{"error": ...}`` body (400 for invalid input, never Powertools' 422),
and the auth schemes API Gateway checks. Models become ``components.schemas``.

    python -m elsai.serverless.contract.openapi docs/openapi.json     # (make openapi)
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pydantic import BaseModel

from elsai.serverless.contract.http import Operation
from elsai.serverless.contract.jobs_api import JobsApi

TITLE = "elsai jobs API"
VERSION = "1"
DESCRIPTION = (
    "Durable agent jobs: start one, follow its progress, answer its interrupts, cancel it. "
    'Every answer is JSON; every error is `{"error": ...}` (API Gateway\'s own auth '
    'refusals are `{"message": ...}`).'
)
ERROR = {"$ref": "#/components/schemas/Error"}
GATEWAY_ERROR = {"$ref": "#/components/schemas/GatewayError"}
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {"error": {"type": "string"}, "details": {}},
    "description": "Every error the handler answers; `details` when there is more to say.",
}
GATEWAY_ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["message"],
    "properties": {"message": {"type": "string"}},
    "description": "What API Gateway itself answers when it refuses a request (auth).",
}
#: Why each error status is answered (the same reason on every operation).
WHY = {
    400: "The request is malformed or breaks a rule (ids, sizes, body, query).",
    401: "No caller identity: API Gateway refused the credentials, or (tenant isolation) the "
    "handler found none.",
    403: "API Gateway refused the signature or the token.",
    404: "No such job or session (another owner's job, under tenant isolation, looks the same).",
    409: "Valid, but not in the job's current state.",
    413: "The job input or the answers would exceed Step Functions' 256 KiB payload cap.",
    422: "A stored session file is corrupt; `problems` lists what `elsai sessions check` finds.",
    500: "Unexpected failure; `details.request_id` names it in the logs.",
    503: "AWS throttled the call; retry after `Retry-After` seconds.",
}
#: Statuses every operation can answer: auth and its failures, invalid input, faults.
COMMON_ERRORS = (400, 401, 403, 500, 503)

SECURITY_SCHEMES: dict[str, Any] = {
    "sigv4": {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "x-amazon-apigateway-authtype": "awsSigv4",
        "description": "IAM (the default): requests signed with AWS Signature Version 4 for "
        "`execute-api`; API Gateway answers 403 for a missing or bad signature. With tenant "
        "isolation the signer's principal owns the jobs and sessions it creates.",
    },
    "cognito": {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "x-amazon-apigateway-authtype": "cognito_user_pools",
        "description": "A Cognito user pool ID token (when the stack sets a user pool); API "
        "Gateway answers 401 without a valid one. With tenant isolation the token's `sub` owns "
        "what it creates; listed admin groups see every job.",
    },
}


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _error_response(status: int) -> dict[str, Any]:
    schema = {"anyOf": [ERROR, GATEWAY_ERROR]} if status in (401, 403) else ERROR
    out: dict[str, Any] = {
        "description": WHY[status],
        "content": {"application/json": {"schema": schema}},
    }
    if status == 503:
        out["headers"] = {"Retry-After": {"schema": {"type": "string"}, "required": True}}
    return out


def _ok_response(op: Operation) -> dict[str, Any]:
    schema: dict[str, Any] = _ref(op.response)
    if op.streams:  # each server-sent event's data is one message of the model
        schema = {"type": "string", "description": f"Server-sent events; each `data` is a "
                  f"{op.response.__name__}.", "x-elsai-message": _ref(op.response)}  # fmt: skip
    out: dict[str, Any] = {
        "description": "Success.",
        "content": {op.media_type: {"schema": schema}},
    }
    if op.headers:
        out["headers"] = {
            name: {"schema": dict(header_schema), "required": True, "description": text}
            for name, (header_schema, text) in op.headers.items()
        }
    if op.links:
        out["links"] = {
            name: {"operationId": target, "parameters": dict(parameters)}
            for name, (target, parameters) in op.links.items()
        }
    return out


def operation_object(op: Operation) -> dict[str, Any]:
    """The OpenAPI operation of one table row."""
    out: dict[str, Any] = {"summary": op.summary, "operationId": op.id}
    if op.description:
        out["description"] = op.description
    out["parameters"] = [
        {"name": p.wire, "in": p.where, "required": p.required, "schema": dict(p.schema),
         "description": p.description}
        for p in op.parameters
    ]  # fmt: skip
    if op.request is not None:
        out["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": _ref(op.request)}},
        }
    statuses = sorted({*COMMON_ERRORS, *op.errors})
    out["responses"] = {
        str(op.status): _ok_response(op),
        **{str(s): _error_response(s) for s in statuses},
    }
    return out


def model_schemas(operations: tuple[Operation, ...]) -> dict[str, Any]:
    """JSON Schemas of every request and response model, as the handler validates them."""
    schemas: dict[str, Any] = {}
    models = [m for op in operations for m in (op.request, op.response) if m is not None]
    for model in models:
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(schema.pop("$defs", {}))
        schemas[model.__name__] = schema
    return schemas


def document(operations: tuple[Operation, ...] | None = None) -> dict[str, Any]:
    """The OpenAPI document of the jobs API (what `docs/openapi.json` holds)."""
    operations = JobsApi.operations() if operations is None else operations
    paths: dict[str, Any] = {}
    for op in sorted(operations, key=lambda o: (o.path, o.method.lower())):
        paths.setdefault(op.path, {})[op.method.lower()] = operation_object(op)
    return {
        "openapi": "3.1.0",
        "info": {"title": TITLE, "version": VERSION, "description": DESCRIPTION},
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {
            "schemas": {"Error": ERROR_SCHEMA, "GatewayError": GATEWAY_ERROR_SCHEMA,
                        **model_schemas(operations)},
            "securitySchemes": SECURITY_SCHEMES,
        },
        "security": [{"sigv4": []}, {"cognito": []}],
    }  # fmt: skip


def render() -> str:
    """The document as `docs/openapi.json` holds it (stable order, trailing newline)."""
    return json.dumps(document(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    """Write the document to the path given (stdout without one)."""
    text = render()
    if not argv:
        sys.stdout.write(text)
    else:
        with open(argv[0], "w", encoding="utf-8") as out:
            out.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
