"""The handler serves its table: a route per row, 405s and the local matcher from the same rows.

Everything here is read from `JobsApi.operations()`, so a route added, removed or moved on
one side only (a Powertools route without a row, a row without a route, a path or method
edited in one place) fails.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from aws_lambda_powertools.event_handler.api_gateway import Router
from pydantic import BaseModel

from elsai.local.api import gateway_resource
from elsai.serverless.contract.http import EVENT_STREAM, Operation, allowed_methods, operation
from elsai.serverless.contract.http import Api as BaseApi
from elsai.serverless.contract.jobs_api import JobsApi, StartedJob
from tests.unit.handlers.jobs_api.helpers import Api, make_event

ROWS = JobsApi.operations()
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def _concrete(template: str) -> str:
    return re.sub(r"\{\w+\}", "x-1", template)


def test_every_row_has_exactly_one_route_and_every_route_is_a_row(api: Api) -> None:
    from elsai_lambdas.jobs_api.app import app
    from elsai_lambdas.jobs_api.routing import ROUTED

    assert set(ROUTED) == {op.id for op in ROWS}
    served = app.get_openapi_schema().paths or {}
    routes = {(m.upper(), path) for path, item in served.items()
              for m, op in item.model_dump(exclude_none=True).items() if isinstance(op, dict)}  # fmt: skip
    assert routes == {(op.method, op.path) for op in ROWS}


@pytest.mark.parametrize("template", sorted({op.path for op in ROWS}))
def test_each_path_answers_its_rows_methods_and_405s_the_rest(api: Api, template: str) -> None:
    path = _concrete(template)
    allowed = sorted(op.method for op in ROWS if op.path == template)
    assert allowed_methods(ROWS, path) == allowed
    for method in METHODS:
        reply = api.call(make_event("post_jobs.json", method=method, path=path, body={}))
        if method in allowed:  # routed: neither a miss nor the miss of a malformed id
            missed = ("no route", "no job or session id can have")
            assert reply.status != 405 and not any(m in str(reply.body) for m in missed), (
                method,
                reply.body,
            )
        else:
            assert reply.status == 405, (method, reply.body)
            assert reply.headers["allow"] == ", ".join(allowed)


@pytest.mark.parametrize("op", ROWS, ids=[op.id for op in ROWS])
def test_the_local_matcher_names_each_rows_resource_and_parameters(op: Operation) -> None:
    names = re.findall(r"\{(\w+)\}", op.path)
    resource, values = gateway_resource(op.url_path({n: f"v/{n} é" for n in names}))
    assert resource == op.path
    assert (values or {}) == {n: f"v/{n} é" for n in names}  # one segment, decoded
    assert gateway_resource("/no/such/route") == ("/{proxy+}", {"proxy": "no/such/route"})


def test_a_route_must_match_its_row() -> None:
    from elsai_lambdas.jobs_api.routing import route

    router = Router()
    with pytest.raises(TypeError, match="must take"):
        route(router, "getJob")(lambda job: None)
    with pytest.raises(TypeError, match="served by"):
        route(router, "getJob")(lambda job_id: None)  # the app's get_job serves it already
    with pytest.raises(KeyError):
        route(router, "noSuchOperation")


def test_a_route_answers_its_rows_model_or_fails_loudly(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A route that answers another shape is a 500 (and a test failure), never a wrong body."""
    from elsai_lambdas.jobs_api import jobs

    monkeypatch.setattr(jobs, "describe_job", lambda job_id: {"job_id": job_id})  # no status
    reply = api.get_job("j-1")
    assert reply.status == 500 and reply.body["error"] == "internal error"


def test_the_response_models_keep_what_they_do_not_name() -> None:
    """An older client reads a newer server's answer, and gives it back as it came."""
    body = {"job_id": "j", "session_id": "s", "agent_id": "a", "status": "RUNNING", "new": [1]}
    assert StartedJob.model_validate(body).as_dict() == body
    assert json.loads(StartedJob.model_validate_json(json.dumps(body)).model_dump_json()) == body


class Message(BaseModel):
    text: str


class RunBody(BaseModel):
    prompt: str


class Streams(BaseApi):
    """A table with one row whose answer is a stream of `Message` (server-sent events)."""

    @operation("POST", "/runs", "runAgent", summary="Run", request=RunBody, media_type=EVENT_STREAM)
    def run(self, prompt: str) -> Iterator[Message]: ...


def test_the_table_can_say_a_response_is_a_stream() -> None:
    """A row may answer server-sent events (also to a POST); its client call says so plainly."""
    from elsai.serverless.contract.openapi import model_schemas, operation_object

    (row,) = Streams.operations()
    assert row.streams and row.method == "POST" and row.request is RunBody
    assert row.response is Message
    ok = operation_object(row)["responses"]["200"]["content"]
    assert list(ok) == [EVENT_STREAM]
    assert ok[EVENT_STREAM]["schema"]["x-elsai-message"] == {"$ref": "#/components/schemas/Message"}
    assert set(model_schemas((row,))) == {"RunBody", "Message"}
    with pytest.raises(NotImplementedError, match="stream"):
        Streams(transport=object()).run("hi")  # type: ignore[arg-type]
