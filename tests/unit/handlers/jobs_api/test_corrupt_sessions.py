"""Corrupt session files: the inspection routes answer 422 with what is corrupt, never 500.

Under tenant isolation a tool may write its own session, so one bad write must not break its
owner's view of it: `GET /sessions/{id}` and `GET /jobs/{id}/events` answer the findings of
`elsai sessions check` (elsai.session.inspect.check) as JSON.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from elsai.session.layout import keys
from tests.unit.handlers.jobs_api.helpers import BUCKET, Api, make_event

pytestmark = pytest.mark.filterwarnings("ignore:No application metrics to publish")


def _events(api: Api, job_id: str) -> Any:
    event = make_event("get_job.json", path=f"/jobs/{job_id}/events")
    event["resource"] = "/jobs/{job_id}/events"
    event["queryStringParameters"] = event["multiValueQueryStringParameters"] = None
    return api.call(event)


def _put(api: Api, key: str, body: bytes) -> None:
    api.s3.put_object(Bucket=BUCKET, Key=key, Body=body)


def _message(index: int, message: Any) -> bytes:
    record = {"message_id": index, "created_at": "2100-01-01T00:00:00Z", "message": message}
    return json.dumps(record).encode()


def _session(api: Api, session_id: str) -> None:
    record = {"session_id": session_id, "created_at": "2100-01-01T00:00:00Z"}
    _put(api, keys.session_key(session_id), json.dumps(record).encode())
    _put(api, keys.message_key(session_id, "agent", 0), _message(0, _user("hello")))


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"text": text}]}


def _assert_report(reply: Any, file: str) -> None:
    assert reply.status == 422, (reply.status, reply.body)
    body = reply.body
    assert "corrupt" in body["error"]
    problems = body["problems"]
    assert problems and all(set(p) == {"severity", "path", "message"} for p in problems)
    assert any(p["path"].endswith(file) and p["severity"] == "error" for p in problems), problems
    assert not any(p["path"].startswith("s3://") for p in problems)  # no bucket names shown


CHECKPOINTS = {
    "not JSON": b"{not json",
    "a list": b"[1, 2]",
    "wrong types": json.dumps({"position": 7, "message_count": "many"}).encode(),
    "not UTF-8": b"\xff\xfe\x00",
}


@pytest.mark.parametrize("body", CHECKPOINTS.values(), ids=CHECKPOINTS.keys())
def test_a_corrupt_checkpoint_is_reported_by_get_session(api: Api, body: bytes) -> None:
    _session(api, "s-cp")
    _put(api, keys.checkpoint_key("s-cp", "agent"), body)
    _assert_report(api.get_session("s-cp"), "agents/agent_agent/checkpoint.json")


MESSAGES = {
    "content not a list": {"role": "assistant", "content": 42},
    "content a string": {"role": "assistant", "content": "hi"},
    "no role": {"content": [{"text": "x"}]},
    "message a list": [1, 2, 3],
}


@pytest.mark.parametrize("message", MESSAGES.values(), ids=MESSAGES.keys())
def test_a_corrupt_message_is_reported_by_both_routes(api: Api, message: Any) -> None:
    job = api.post_job({"prompt": "hello", "session_id": "s-msg"}).body
    _session(api, "s-msg")
    _put(api, keys.message_key("s-msg", "agent", 1), _message(1, message))
    _assert_report(_events(api, job["job_id"]), "agents/agent_agent/messages/message_1.json")
    _assert_report(api.get_session("s-msg"), "agents/agent_agent/messages/message_1.json")


def test_a_message_file_that_is_not_json_is_reported_by_the_events_route(api: Api) -> None:
    job = api.post_job({"prompt": "hello", "session_id": "s-raw"}).body
    _session(api, "s-raw")
    _put(api, keys.message_key("s-raw", "agent", 1), b'{"message_id": 1, "mess')
    _assert_report(_events(api, job["job_id"]), "agents/agent_agent/messages/message_1.json")


def test_a_sound_session_still_answers_200(api: Api) -> None:
    job = api.post_job({"prompt": "hello", "session_id": "s-ok"}).body
    _session(api, "s-ok")
    assert api.get_session("s-ok").status == 200
    assert _events(api, job["job_id"]).status == 200
