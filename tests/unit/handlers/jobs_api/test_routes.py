"""Routing and error rendering: misses, wrong methods and server faults are JSON too."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from elsai_lambdas.jobs_api import aws as jobs_aws
from tests.unit.handlers.jobs_api.helpers import EVENTS, Api, load_event, make_event


def test_sam_fixtures_are_rest_proxy_events_for_the_deployed_routes() -> None:
    routes = {
        "post_jobs.json": ("POST", "/jobs"),
        "post_jobs_with_ids.json": ("POST", "/jobs"),
        "get_job.json": ("GET", "/jobs/{job_id}"),
        "post_job_responses.json": ("POST", "/jobs/{job_id}/responses"),
        "get_session.json": ("GET", "/sessions/{session_id}"),
    }
    assert sorted(p.name for p in EVENTS.glob("*.json")) == sorted(routes)
    for name, (method, resource) in routes.items():
        event = load_event(name)
        assert (event["httpMethod"], event["resource"]) == (method, resource), name
        assert event["requestContext"]["stage"] == "v1"
        assert event["requestContext"]["resourcePath"] == resource


@pytest.mark.parametrize(
    "path", ["/", "/job", "/jobs/x/y", "/sessions", "/v1/jobs", "/jobs/x/responses/y"]
)
def test_unknown_routes_are_404_json(api: Api, path: str) -> None:
    reply = api.call(make_event("get_job.json", path=path))
    assert reply.status == 404, reply.body
    assert reply.error_message().startswith("no route GET ")


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PUT", "/jobs", "GET, POST"),  # GET /jobs lists jobs
        ("PUT", "/jobs/abc", "DELETE, GET"),  # DELETE /jobs/{id} cancels
        ("PUT", "/jobs/abc/responses", "POST"),
        ("GET", "/jobs/abc/responses", "POST"),
        ("POST", "/sessions/s1", "GET"),
        ("OPTIONS", "/jobs", "GET, POST"),
        ("PATCH", "/jobs/abc", "DELETE, GET"),
        ("POST", "/jobs/abc/events", "GET"),
    ],
)
def test_wrong_methods_are_405_json_with_allow(
    api: Api, method: str, path: str, allow: str
) -> None:
    reply = api.call(make_event("post_jobs.json", method=method, path=path))
    assert reply.status == 405, reply.body
    assert reply.headers["allow"] == allow
    reply.error_message()


def test_unexpected_failure_is_a_json_500_without_traceback(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> None:
        raise RuntimeError("secret internals /var/task/api_handler.py")

    monkeypatch.setattr(jobs_aws, "sfn", broken)
    event = make_event("post_jobs.json")
    reply = api.call(event)
    assert reply.status == 500
    assert reply.body == {
        "error": "internal error",
        "details": {"request_id": event["requestContext"]["requestId"]},
    }
    assert "Traceback" not in json.dumps(reply.body)


def test_aws_throttling_is_503_with_retry_after(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    class Throttled:
        def describe_execution(self, **_: object) -> None:
            raise ClientError(
                {"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}},
                "DescribeExecution",
            )

    monkeypatch.setattr(jobs_aws, "sfn", Throttled)
    reply = api.get_job("abc")
    assert reply.status == 503
    assert reply.headers["retry-after"] == "1"
    reply.error_message()


@pytest.mark.parametrize("route", ["session", "job"])
def test_s3_throttling_under_the_session_store_is_503_too(
    api: Api, monkeypatch: pytest.MonkeyPatch, route: str
) -> None:
    """The store wraps S3's SlowDown in a StorageError; the API still sees throttling."""
    job_id = api.post_job({"prompt": "hi"}).body["job_id"]  # RUNNING: GET reads the token

    class SlowS3:
        def get_object(self, **_: object) -> None:
            raise ClientError({"Error": {"Code": "SlowDown", "Message": "slow"}}, "GetObject")

        def list_objects_v2(self, **_: object) -> None:
            raise ClientError({"Error": {"Code": "SlowDown", "Message": "slow"}}, "ListObjectsV2")

    monkeypatch.setattr(jobs_aws, "s3", SlowS3)
    reply = api.get_session("s1") if route == "session" else api.get_job(job_id)
    assert reply.status == 503, reply.body
    assert reply.headers["retry-after"] == "1"
