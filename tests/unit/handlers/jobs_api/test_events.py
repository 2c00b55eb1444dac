"""GET /jobs/{id}/events and DELETE /jobs/{id}: progress pages, cancel, and their refusals."""

from __future__ import annotations

import base64
import json
import random
from typing import Any

import pytest

from elsai.serverless.contract import service_keys
from elsai.session.layout import keys
from tests.unit.handlers.jobs_api.helpers import (
    BUCKET,
    INTERRUPTS,
    Api,
    Reply,
    make_event,
    wait_until,
)
from tests.unit.handlers.jobs_api.test_fuzz import SEED, WEIRD_STRINGS, _random_text, assert_refused

pytestmark = pytest.mark.filterwarnings("ignore:No application metrics to publish")


def events(api: Api, job_id: str, query: dict[str, str | list[str]] | None = None) -> Reply:
    event = make_event("get_job.json", path=f"/jobs/{job_id}/events")
    event["resource"] = "/jobs/{job_id}/events"
    multi = {k: v if isinstance(v, list) else [v] for k, v in (query or {}).items()}
    event["queryStringParameters"] = {k: v[-1] for k, v in multi.items()} or None
    event["multiValueQueryStringParameters"] = multi or None
    return api.call(event)


def cancel(api: Api, job_id: str) -> Reply:
    return api.call(make_event("get_job.json", method="DELETE", path=f"/jobs/{job_id}"))


def all_events(api: Api, job_id: str, limit: int) -> list[dict[str, Any]]:
    """Every event, page by page, until a page comes back empty."""
    out: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        query = {"limit": str(limit), **({"after": cursor} if cursor else {})}
        reply = events(api, job_id, query)
        assert reply.status == 200, reply.body
        assert len(reply.body["events"]) <= limit + 2  # one history event may stand for 3
        if not reply.body["events"]:
            return out
        out.extend(reply.body["events"])
        cursor = reply.body["cursor"]


def test_cancel_stops_a_running_job_and_it_reports_cancelled(api: Api) -> None:
    job_id = api.post_job({"prompt": "hi"}).body["job_id"]
    reply = cancel(api, job_id)
    assert reply.status == 200, reply.body
    assert reply.body["job_id"] == job_id and reply.body["status"] == "CANCELLED"
    assert api.describe(job_id)["status"] == "ABORTED"  # Step Functions' own word
    assert api.get_job(job_id).body["status"] == "CANCELLED"
    record = json.loads(
        api.s3.get_object(Bucket=BUCKET, Key=service_keys.job_cancel_key(job_id))["Body"].read()
    )
    assert record["job_id"] == job_id
    again = cancel(api, job_id)
    assert again.status == 409
    assert "already ended with status CANCELLED" in again.error_message()


def test_an_operator_stop_is_aborted_not_cancelled(api: Api) -> None:
    job_id = api.post_job({"prompt": "hi"}).body["job_id"]
    api.sfn.stop_execution(executionArn=api.execution_arn(job_id))
    assert api.get_job(job_id).body["status"] == "ABORTED"
    assert events(api, job_id).body["status"] == "ABORTED"
    assert "status ABORTED" in cancel(api, job_id).error_message()


def test_cancel_and_events_of_an_unknown_job_are_404(api: Api) -> None:
    for reply in (cancel(api, "no-such-job"), events(api, "no-such-job")):
        assert reply.status == 404, reply.body
        assert "no job 'no-such-job'" in reply.error_message()


def test_cancelling_a_finished_job_is_409_and_changes_nothing(engine_api: Api) -> None:
    job_id = engine_api.post_job({"prompt": "Process order 1"}).body["job_id"]
    wait_until(lambda: engine_api.describe(job_id)["status"] == "SUCCEEDED", what="job end")
    reply = cancel(engine_api, job_id)
    assert reply.status == 409
    assert "already ended with status SUCCEEDED" in reply.error_message()
    assert "only a running job can be cancelled" in reply.error_message()
    assert engine_api.get_job(job_id).body["status"] == "SUCCEEDED"


def test_events_follow_a_job_through_its_interrupt(engine_api: Api) -> None:
    job_id = engine_api.post_job({"prompt": "ask", "session_id": "customer-9"}).body["job_id"]
    wait_until(
        lambda: engine_api.get_job(job_id).body["status"] == "WAITING_FOR_INPUT", what="park"
    )
    first = events(engine_api, job_id)
    assert first.body["status"] == "RUNNING"
    assert [e["type"] for e in first.body["events"]] == ["waiting_for_input"]
    nothing_new = events(engine_api, job_id, {"after": first.body["cursor"]})
    assert nothing_new.body["events"] == []
    answers = [{"interruptId": i["id"], "response": "ok"} for i in INTERRUPTS]
    assert engine_api.answer(job_id, {"responses": answers}).status == 200
    wait_until(lambda: engine_api.describe(job_id)["status"] == "SUCCEEDED", what="job end")
    rest = events(engine_api, job_id, {"after": nothing_new.body["cursor"]}).body["events"]
    assert [e["type"] for e in rest] == ["answered", "job_ended"]
    assert rest[0]["interrupt_ids"] == [i["id"] for i in INTERRUPTS]
    assert rest[1]["status"] == "SUCCEEDED"
    assert all_events(engine_api, job_id, 1) == first.body["events"] + rest


def _cursor(data: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def bad_cursors() -> list[str]:
    """Cursors no page handed out: garbage, other JSON, wrong fields and types, oversized."""
    rng = random.Random(SEED + 10)
    cases = [s for s in WEIRD_STRINGS if isinstance(s, str) and s] + ["=", "====", "a" * 2001]
    cases += [_random_text(rng) for _ in range(20)]
    cases += [_cursor(v) for v in (None, 1, "x", [], [1], {"m": "x"}, {"h": -1.5}, {"z": 1})]
    cases += [_cursor({"m": 1, "h": 2, "s": {"state": 1}}), _cursor({"s": {"failures": "x"}})]
    cases += [_cursor({"m": -1}), _cursor({"h": -5}), _cursor({"s": {"failures": -1}})]
    cases += [_cursor({"s": {"state": "x" * 81}}), _cursor({"m": True}), _cursor({"m": 1e30})]
    cases += [base64.urlsafe_b64encode(b"\xff\xfe").decode(), _cursor({"m": 1}) + "!"]
    return cases


def test_bad_cursors_limits_and_query_parameters_are_400(api: Api) -> None:
    job_id = api.post_job({"prompt": "hi"}).body["job_id"]
    queries: list[dict[str, str | list[str]]] = [{"after": c} for c in bad_cursors()]
    queries += [{"limit": v} for v in ["0", "201", "-1", "abc", "1.5", " 1", "１", "1e2", "9" * 50]]
    queries += [{"foo": "bar"}, {"after": ["", ""]}, {"limit": ["1", "2"]}, {"Limit": "1"}]
    for query in queries:
        reply = events(api, job_id, query)
        assert_refused(reply, str(query))
        assert reply.status == 400, (query, reply.body)
    assert events(api, job_id, {"limit": "200"}).status == 200


def test_fuzzed_path_ids_of_the_new_routes_are_4xx(api: Api) -> None:
    rng = random.Random(SEED + 11)
    ids = [s for s in WEIRD_STRINGS if isinstance(s, str) and s and "/" not in s]
    ids += [_random_text(rng).replace("/", "") or "-" for _ in range(30)]
    for value in ids:
        assert_refused(events(api, value), value)
        assert_refused(cancel(api, value), value)
    assert api.executions() == []


def list_jobs(api: Api, query: dict[str, str | list[str]] | None = None) -> Reply:
    event = make_event("get_job.json", path="/jobs")
    event["resource"] = "/jobs"
    multi = {k: v if isinstance(v, list) else [v] for k, v in (query or {}).items()}
    event["queryStringParameters"] = {k: v[-1] for k, v in multi.items()} or None
    event["multiValueQueryStringParameters"] = multi or None
    return api.call(event)


def test_list_jobs_pages_newest_first_and_shows_cancelled(api: Api) -> None:
    ids = [api.post_job({"prompt": f"job {i}"}).body["job_id"] for i in range(3)]
    assert cancel(api, ids[1]).status == 200
    seen: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        reply = list_jobs(api, {"limit": "2", **({"after": cursor} if cursor else {})})
        assert reply.status == 200, reply.body
        seen += reply.body["jobs"]
        cursor = reply.body["cursor"]
        if not cursor:
            break
    assert sorted(j["job_id"] for j in seen) == sorted(ids)
    assert {j["job_id"]: j["status"] for j in seen}[ids[1]] == "CANCELLED"
    running = list_jobs(api, {"status": "RUNNING"}).body["jobs"]
    assert sorted(j["job_id"] for j in running) == sorted([ids[0], ids[2]])
    for query in [{"status": "CANCELLED"}, {"limit": "101"}, {"x": "1"}, {"after": "bad"}]:
        reply = list_jobs(api, query)  # type: ignore[arg-type]
        assert_refused(reply, str(query))


def _store_message(api: Api, session_id: str, index: int, message: dict[str, Any]) -> None:
    from elsai.session.layout.records import MessageRecord, dump

    record = MessageRecord(message_id=index, created_at="2100-01-01T00:00:00Z", message=message)
    key = keys.message_key(session_id, "agent", index)
    api.s3.put_object(Bucket=BUCKET, Key=key, Body=dump(record))


def test_events_are_bounded_per_field_and_per_page(api: Api) -> None:
    job = api.post_job({"prompt": "big", "session_id": "big-session"}).body
    huge = "x" * 3_000
    for i in range(40):  # every field over its bound; 20 assistant messages of ~15 KB shown
        role = "user" if i % 2 == 0 else "assistant"
        content: list[dict[str, Any]] = [{"text": huge}]
        if role == "assistant":  # 50 tool calls, each with a long input and a long id
            content += [
                {
                    "toolUse": {
                        "toolUseId": f"t{i}-{n}" + "i" * 1000,
                        "name": "t",
                        "input": {"a": huge},
                    }
                }
                for n in range(50)
            ]
        _store_message(api, "big-session", i, {"role": role, "content": content})
    first = events(api, job["job_id"], {"limit": "200"})
    assert first.status == 200
    assert len(json.dumps(first.body).encode()) <= 256 * 1024 + 1024
    shown = [e for e in first.body["events"] if e["type"] == "message"]
    assert shown and all(e["truncated"] and len(e["text"]) == 2_000 for e in shown)
    assert all(len(c["input"]) == 500 for e in shown for c in e["tool_calls"])
    assert all(len(c["id"]) == 200 for e in shown for c in e["tool_calls"])
    assert {len(e["tool_calls"]) for e in shown if e["role"] == "assistant"} == {20}
    assert len(shown) < 40  # the page stopped at its byte bound; the rest comes next
    seen = all_events(api, job["job_id"], 200)
    assert [e["index"] for e in seen if e["type"] == "message"] == list(range(40))
