"""The handler and its OpenAPI document agree; the jobs API client sends what it allows.

A request the document calls valid is not refused as invalid (400), one it calls invalid is,
every request the client sends validates against the document (path patterns, query and
header schemas, the request body schema), and every answer the handler gives validates
against the document's response schema for its status.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import jsonschema
import pytest
from referencing import Registry, Resource

from elsai.client import ApiError, http_client
from elsai.local.api import JobsApiMixin
from elsai.local.http import LocalHttpApi
from elsai.serverless.contract.openapi import document
from tests.unit.handlers.jobs_api.helpers import Api, make_event

DOC = document()


def _schema(name: str) -> dict[str, Any]:
    return dict(DOC["components"]["schemas"][name])


def _validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    registry: Registry = Registry().with_resource("urn:doc", Resource.from_contents(
        {**DOC, "$schema": "https://json-schema.org/draft/2020-12/schema"}))  # fmt: skip
    rooted = json.loads(json.dumps(schema).replace('"#/components', '"urn:doc#/components'))
    return jsonschema.Draft202012Validator(rooted, registry=registry)


def _param(path: str, method: str, name: str) -> dict[str, Any]:
    (found,) = [p for p in DOC["paths"][path][method]["parameters"] if p["name"] == name]
    return dict(found["schema"])


def _valid(schema: dict[str, Any], value: Any) -> bool:
    return _validator(schema).is_valid(value)


@pytest.mark.parametrize("body", [None, "", "[]", '{"prompt": ""}', '{"prompt": "x", "x": 1}'])
def test_a_start_without_a_valid_body_is_400_and_the_document_requires_it(
    api: Api, body: str | None
) -> None:
    operation = DOC["paths"]["/jobs"]["post"]
    assert operation["requestBody"]["required"] is True
    schema = operation["requestBody"]["content"]["application/json"]["schema"]
    assert body is None or not body or not _valid(schema, json.loads(body))
    event = make_event("post_jobs.json", raw_body=body or "")
    event["body"] = body  # None: no body at all
    assert api.call(event).status == 400


@pytest.mark.parametrize(
    "job_id", ["a", "A-b_9", "x" * 80, "x" * 81, "a.b", "a:b", "a b", "é", "a%2Fb"]
)
def test_a_job_id_the_document_allows_is_never_a_400(api: Api, job_id: str) -> None:
    allowed = _valid(_param("/jobs/{job_id}", "get", "job_id"), job_id)
    for method, path in (("GET", f"/jobs/{job_id}"), ("GET", f"/jobs/{job_id}/events"),
                         ("DELETE", f"/jobs/{job_id}")):  # fmt: skip
        event = make_event("get_job.json", method=method, path=path)
        event["queryStringParameters"] = event["multiValueQueryStringParameters"] = None
        status = api.call(event).status
        assert (status == 404) if allowed else (status == 400), (method, path, status)


@pytest.mark.parametrize(
    "session_id", ["s", "a.b", ".a", "a.", "a:b-c_d", "x" * 128, "x" * 129, "a..b", ".", "a b"]
)
def test_a_session_id_the_document_allows_is_never_a_400(api: Api, session_id: str) -> None:
    allowed = _valid(_param("/sessions/{session_id}", "get", "session_id"), session_id)
    assert api.get_session(session_id).status == (404 if allowed else 400)
    body = {"prompt": "hi", "session_id": session_id}
    assert _valid(_schema("StartJob"), body) == allowed
    assert api.post_job(body).status == (202 if allowed else 400)


@pytest.mark.parametrize("key", ["k", "orders-2024-06-01", "~!" * 128, "a b", "é", "k" * 257])
def test_an_idempotency_key_the_document_allows_is_accepted(api: Api, key: str) -> None:
    allowed = _valid(_param("/jobs", "post", "Idempotency-Key"), key)
    reply = api.post_job({"prompt": "hi"}, headers={"Idempotency-Key": key})
    assert reply.status == (202 if allowed else 400), reply.body


class _Recorded(LocalHttpApi):
    """The real handler on 127.0.0.1, keeping every request as it arrived."""

    def __init__(self, runtime: JobsApiMixin) -> None:
        super().__init__(runtime)
        self.requests: list[tuple[str, str, dict[str, str], str | None]] = []
        self.replies: list[tuple[int, bytes]] = []

    def handle(self, method: str, target: str, headers: dict[str, str], body: str | None) -> Any:
        self.requests.append((method, target, headers, body))
        status, out_headers, data = super().handle(method, target, headers, body)
        self.replies.append((status, data))
        return status, out_headers, data


class _Bridge(JobsApiMixin):
    def __init__(self, module: Any) -> None:
        self._api = module


@pytest.fixture
def served(api: Api) -> Iterator[_Recorded]:
    server = _Recorded(_Bridge(api.module))
    server.start()
    try:
        yield server
    finally:
        server.close()


def _operation_of(method: str, path: str) -> tuple[dict[str, Any], dict[str, str]]:
    for template, item in DOC["paths"].items():
        names = re.findall(r"{(\w+)}", template)
        pattern = "^" + re.sub(r"{\w+}", "([^/]+)", template) + "$"
        found = re.match(pattern, path)
        if found and method.lower() in item:
            values = {n: unquote(v) for n, v in zip(names, found.groups(), strict=True)}
            return item[method.lower()], values
    raise AssertionError(f"{method} {path} is in no operation of the document")


def _check_request(method: str, target: str, headers: dict[str, str], body: str | None) -> None:
    parts = urlsplit(target)
    operation, path_values = _operation_of(method, parts.path)
    query = dict(parse_qsl(parts.query))
    lower = {k.lower(): v for k, v in headers.items()}
    params = {(p["in"], p["name"]): p for p in operation["parameters"]}
    assert set(query) <= {name for where, name in params if where == "query"}, target
    for (where, name), param in params.items():
        given = {"path": path_values, "query": query}.get(where)
        value = (given or {}).get(name) if where != "header" else lower.get(name.lower())
        if value is None:
            assert not param["required"], (target, name)
            continue
        if param["schema"].get("type") == "integer":
            value = int(value)
        _validator(param["schema"]).validate(value)
    if "requestBody" in operation:
        schema = operation["requestBody"]["content"]["application/json"]["schema"]
        assert body is not None, target
        _validator(schema).validate(json.loads(body))
    else:
        assert body is None, target


def test_every_request_the_client_sends_validates_against_the_document(
    served: _Recorded,
) -> None:
    client = http_client(served.url, sign=False)
    job = client.start("hello", session_id="docs.session-1", agent_id="agent",
                       idempotency_key="orders-2024-06-01")  # fmt: skip
    client.start("again", version_policy="upgrade_on_resume")
    client.get(job.job_id)
    page = client.events(job.job_id, limit=5)
    client.events(job.job_id, after=page.cursor)
    client.list(limit=10, status="RUNNING")
    with pytest.raises(ApiError):  # not waiting: 409, but the request itself is well formed
        client.answer(job.job_id, [{"id": "interrupt-1", "response": {"approved": True}}])
    with pytest.raises(ApiError):  # no version to upgrade to outside a deploy: 409
        client.upgrade(job.job_id)
    with pytest.raises(ApiError):  # no agent ran here (moto's engine is off): no session yet
        client.session(job.session_id)
    client.cancel(job.job_id)
    assert [m for m, *_ in served.requests] == ["POST", "POST", "GET", "GET", "GET", "GET",
                                                 "POST", "POST", "GET", "DELETE"]  # fmt: skip
    for request in served.requests:
        _check_request(*request)


def test_every_answer_the_handler_gives_validates_against_the_document(
    served: _Recorded,
) -> None:
    """The handler's bodies (success and refusal alike) are what the document says they are."""
    client = http_client(served.url, sign=False)
    job = client.start("hello", session_id="docs-answers")
    for call in (lambda: client.get(job.job_id), lambda: client.events(job.job_id, limit=3),
                 lambda: client.list(limit=2), lambda: client.get("no-such-job"),
                 lambda: client.events(job.job_id, after="not-a-cursor"),
                 lambda: client.answer(job.job_id, [{"id": "i-1", "response": 1}]),
                 lambda: client.session("no-such-session"), lambda: client.cancel(job.job_id),
                 lambda: client.cancel(job.job_id)):  # fmt: skip
        with contextlib.suppress(ApiError):  # refusals are answers to check too
            call()
    statuses = set()
    for (method, target, *_), (status, data) in zip(served.requests, served.replies, strict=True):
        operation, _ = _operation_of(method, urlsplit(target).path)
        answer = operation["responses"][str(status)]
        _validator(answer["content"]["application/json"]["schema"]).validate(json.loads(data))
        statuses.add(status)
    assert {200, 202, 400, 404, 409} <= statuses


@pytest.mark.parametrize(
    "answer",
    [{"id": "i-1", "response": 1}, {"interruptId": "i-1", "response": 1},
     {"id": "i-1", "interruptId": "i-2", "response": 1}, {"response": 1}, {"id": "i-1"}],
)  # fmt: skip
def test_an_answer_the_document_allows_is_not_refused_as_invalid(
    api: Api, answer: dict[str, Any]
) -> None:
    allowed = _valid(_schema("AnswerJob"), {"responses": [answer]})
    reply = api.answer("no-such-job", {"responses": [answer]})
    assert reply.status == (404 if allowed else 400), reply.body
