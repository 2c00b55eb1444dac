"""The jobs API's OpenAPI document, from its routes, request models and limits: one source.

Powertools lists the routes (`app.get_openapi_json_schema`); this module adds what the handler
enforces by hand: the request bodies (`models.StartJob`, `models.AnswerJob`, parsed in the
route rather than by a ``Body()`` parameter), path id patterns and query parameters (from
`elsai.serverless.limits` and the paging constants), every status code the API answers with
the ``{"error": ...}`` body (400 for invalid input, where Powertools would declare 422), the
auth schemes API Gateway checks, and links for stateful clients (start → status → events →
answer → cancel). A route without an entry in `_OPERATIONS` makes `document()` fail, so a
new route cannot go undocumented.

    python -m elsai_lambdas.jobs_api.openapi docs/openapi.json     # (make openapi)
"""

import json
import sys
from typing import Any

from elsai.serverless import limits
from elsai.serverless.contract import service_keys
from elsai_lambdas.jobs_api import events, listing
from elsai_lambdas.jobs_api.models import AnswerJob, StartJob

TITLE = "elsai jobs API"
VERSION = "1"
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
_WHY = {
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
# Statuses every operation can answer: auth and its failures, invalid input, faults.
_COMMON = (400, 401, 403, 500, 503)
JOB_ID = {
    "type": "string",
    "pattern": limits.JOB_ID_PATTERN,
    "minLength": 1,
    "maxLength": limits.MAX_JOB_ID_LENGTH,
}
SESSION_ID = {
    "type": "string",
    "pattern": limits.SAFE_ID_PATTERN,
    "minLength": 1,
    "maxLength": limits.MAX_ID_LENGTH,
}
IDEMPOTENCY_KEY = {
    "type": "string",
    "pattern": limits.IDEMPOTENCY_KEY_PATTERN,
    "minLength": 1,
    "maxLength": limits.MAX_IDEMPOTENCY_KEY_CHARS,
}
OWNER_TAG = {"type": "string", "pattern": f"^[0-9a-f]{{{service_keys.OWNER_TAG_CHARS}}}$"}
CURSOR = {"type": "string", "maxLength": events.MAX_CURSOR_CHARS}  # "": from the start


def _param(name: str, where: str, schema: dict[str, Any], text: str) -> dict[str, Any]:
    required = where == "path"
    return {"name": name, "in": where, "required": required, "schema": schema, "description": text}


def _limit(maximum: int, default: int) -> dict[str, Any]:
    schema = {"type": "integer", "minimum": 1, "maximum": maximum, "default": default}
    return _param("limit", "query", schema, f"Page size, 1-{maximum}.")


def _after(what: str) -> dict[str, Any]:
    return _param("after", "query", CURSOR, f"The `cursor` of the previous page of {what}.")


_JOB_PARAM = _param("job_id", "path", JOB_ID, "The job id `POST /jobs` answered.")
_JOB_OUT = {
    "type": "object",
    "required": ["job_id", "status"],
    "properties": {"job_id": {"type": "string"}, "status": {"type": "string"}},
}
_STARTED = {
    "type": "object",
    "required": ["job_id", "session_id", "agent_id", "status"],
    "properties": {k: {"type": "string"} for k in ("job_id", "session_id", "agent_id", "status")},
}
# Links for stateful clients: link name -> (operation id, its parameters from this answer).
_THE_JOB = {"job_id": "$response.body#/job_id"}
_JOB_LINKS = {
    "GetJob": ("getJob", _THE_JOB),
    "GetEvents": ("getEvents", _THE_JOB),
    "AnswerJob": ("answerJob", _THE_JOB),
    "CancelJob": ("cancelJob", _THE_JOB),
    "GetSession": ("getSession", {"session_id": "$response.body#/session_id"}),
}
_NEXT_EVENTS = {
    "NextEvents": (
        "getEvents",
        {"job_id": "$request.path.job_id", "after": "$response.body#/cursor"},
    )
}
_NULLABLE_CURSOR = {"anyOf": [{"type": "string"}, {"type": "null"}]}

# operation id, parameters, request body model, 2xx (status, schema, headers), more statuses
_OPERATIONS: dict[tuple[str, str], dict[str, Any]] = {
    ("post", "/jobs"): {
        "id": "startJob",
        "params": [
            _param(
                "Idempotency-Key",
                "header",
                IDEMPOTENCY_KEY,
                "Retrying with the same key and body starts nothing new (the job id is "
                "derived from it); the same key with another body is a 409.",
            ),
        ],  # fmt: skip
        "body": StartJob,
        "ok": (
            202,
            _STARTED,
            {
                "Location": ({"type": "string"}, "The job's URL: `/jobs/{job_id}`."),
                "Idempotent-Replayed": (
                    {"type": "string", "enum": ["true", "false"]},
                    "Whether an earlier request with this key started the job.",
                ),
            },
        ),  # fmt: skip
        "more": (409, 413),
        "links": _JOB_LINKS,
    },
    ("get", "/jobs"): {
        "id": "listJobs",
        "params": [
            _limit(listing.MAX_LIST, min(events.DEFAULT_LIMIT, listing.MAX_LIST)),
            _after("jobs"),
            _param(
                "status",
                "query",
                {"type": "string", "enum": list(listing.STATUSES)},
                "Only jobs whose execution has this status.",
            ),
        ],  # fmt: skip
        "ok": (
            200,
            {
                "type": "object",
                "required": ["jobs", "cursor"],
                "properties": {
                    "jobs": {"type": "array", "items": _JOB_OUT},
                    "cursor": _NULLABLE_CURSOR,
                },
            },
            {},
        ),  # fmt: skip
        "more": (),
    },
    ("get", "/jobs/{job_id}"): {
        "id": "getJob",
        "params": [_JOB_PARAM],
        "ok": (200, _JOB_OUT, {}),
        "more": (404,),
    },  # fmt: skip
    ("delete", "/jobs/{job_id}"): {
        "id": "cancelJob",
        "params": [_JOB_PARAM],
        "ok": (200, _JOB_OUT, {}),
        "more": (404, 409),
    },  # fmt: skip
    ("get", "/jobs/{job_id}/events"): {
        "id": "getEvents",
        "params": [_JOB_PARAM, _limit(events.MAX_LIMIT, events.DEFAULT_LIMIT), _after("events")],
        "ok": (
            200,
            {
                "type": "object",
                "required": ["job_id", "status", "events", "cursor"],
                "properties": {
                    **_JOB_OUT["properties"],
                    "events": {
                        "type": "array",
                        "description": "Progress events in order. An event of a Graph's or "
                        "Swarm's node slice (slice_started, retry, attempt_failed, resumed, "
                        "slice_ended, interrupted) also has `node`, the node it ran; the "
                        "job's own slices have none.",
                    },
                    "cursor": {"type": "string"},
                },
            },
            {},
        ),  # fmt: skip
        "more": (404, 422),
        "links": _NEXT_EVENTS,
    },
    ("post", "/jobs/{job_id}/responses"): {
        "id": "answerJob",
        "params": [_JOB_PARAM],
        "body": AnswerJob,
        "ok": (
            200,
            {
                "type": "object",
                "required": ["job_id", "status", "answered"],
                "properties": {
                    **_JOB_OUT["properties"],
                    "answered": {"type": "array", "items": {"type": "string"}},
                },
            },
            {},
        ),  # fmt: skip
        "more": (404, 409, 413),
    },
    ("post", "/jobs/{job_id}/upgrade"): {
        "id": "upgradeJob",
        "params": [_JOB_PARAM],
        "ok": (
            200,
            {
                "type": "object",
                "required": ["job_id", "version", "upgraded"],
                "properties": {
                    "job_id": {"type": "string"},
                    "version": {"type": "string"},
                    "upgraded": {"type": "boolean"},
                    "event": {"type": "string"},
                },
            },
            {},
        ),  # fmt: skip
        "more": (404, 409),
    },
    ("get", "/sessions/{session_id}"): {
        "id": "getSession",
        "params": [
            _param("session_id", "path", SESSION_ID, "A session id."),
            _param(
                "owner",
                "query",
                OWNER_TAG,
                "Admins (tenant isolation): read this owner's "
                "session; the tag a job id carries (`o<tag>-...`). Others: their own only.",
            ),
        ],  # fmt: skip
        "ok": (
            200,
            {
                "type": "object",
                "required": ["session_id", "agents"],
                "properties": {"session_id": {"type": "string"}, "agents": {"type": "array"}},
            },
            {},
        ),  # fmt: skip
        "more": (404, 422),
    },
}

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


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _error_response(status: int) -> dict[str, Any]:
    schema = {"anyOf": [ERROR, GATEWAY_ERROR]} if status in (401, 403) else ERROR
    out: dict[str, Any] = {"description": _WHY[status], "content": _json(schema)}
    if status == 503:
        out["headers"] = {"Retry-After": {"schema": {"type": "string"}, "required": True}}
    return out


def _ok_response(spec: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    status, schema, headers = spec["ok"]
    out: dict[str, Any] = {"description": "Success.", "content": _json(schema)}
    if headers:
        out["headers"] = {
            name: {"schema": schema, "required": True, "description": text}
            for name, (schema, text) in headers.items()
        }
    if spec.get("links"):
        out["links"] = {
            name: {"operationId": target, "parameters": parameters}
            for name, (target, parameters) in spec["links"].items()
        }
    return str(status), out


def _operation(generated: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """Powertools' operation, with the parameters, body and answers the handler really has."""
    operation: dict[str, Any] = {
        "summary": generated.get("summary"),
        "operationId": spec["id"],
        "parameters": spec["params"],
    }
    if generated.get("description"):
        operation["description"] = generated["description"]
    if "body" in spec:
        ref = {"$ref": f"#/components/schemas/{spec['body'].__name__}"}
        operation["requestBody"] = {"required": True, "content": _json(ref)}
    ok_status, ok = _ok_response(spec)
    statuses = sorted({*_COMMON, *spec["more"]})
    operation["responses"] = {ok_status: ok, **{str(s): _error_response(s) for s in statuses}}
    return operation


def _model_schemas() -> dict[str, Any]:
    """JSON Schemas of the request models, as the handler validates them (one source)."""
    schemas: dict[str, Any] = {}
    for model in (StartJob, AnswerJob):
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(schema.pop("$defs", {}))
        schemas[model.__name__] = schema
    return schemas


def document() -> dict[str, Any]:
    """The OpenAPI document of the jobs API (what `docs/openapi.json` holds)."""
    from elsai_lambdas.jobs_api.app import app

    doc = json.loads(app.get_openapi_json_schema(title=TITLE, version=VERSION))
    described = {(method, path) for path, item in doc["paths"].items() for method in item}
    if described != set(_OPERATIONS):
        raise LookupError(
            f"routes and the document's operations differ: {sorted(described ^ set(_OPERATIONS))}"
        )
    paths: dict[str, Any] = {}
    for method, path in sorted(_OPERATIONS, key=lambda key: (key[1], key[0])):
        generated = doc["paths"][path][method]
        paths.setdefault(path, {})[method] = _operation(generated, _OPERATIONS[(method, path)])
    doc["info"]["description"] = (
        "Durable agent jobs: start one, follow its progress, answer its interrupts, cancel it. "
        'Every answer is JSON; every error is `{"error": ...}` (API Gateway\'s own auth '
        'refusals are `{"message": ...}`).'
    )
    doc["paths"] = paths
    doc["components"] = {
        "schemas": {"Error": ERROR_SCHEMA, "GatewayError": GATEWAY_ERROR_SCHEMA,
                    **_model_schemas()},
        "securitySchemes": SECURITY_SCHEMES,
    }  # fmt: skip
    doc["security"] = [{"sigv4": []}, {"cognito": []}]
    return doc


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
