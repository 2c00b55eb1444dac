"""Jobs waiting for human input: GET shows the interrupts, POST /responses sends the token.

The token is real: moto's engine runs a ``lambda:invoke.waitForTaskToken`` task whose Lambda
is the real agent handler (``action: park``), which stores it at jobs/<id>/task_token.json.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from elsai.serverless.contract import service_keys
from tests.unit.handlers.jobs_api.helpers import BUCKET, INTERRUPTS, Api, load_event, wait_until

# The agent handler's park step publishes no metrics; Powertools warns about that.
pytestmark = pytest.mark.filterwarnings("ignore:No application metrics to publish")

ANSWERS = [
    {"interruptId": "interrupt-approve", "response": {"approved": True}},
    {"interruptId": "interrupt-address", "response": "Main St 1"},
]


def _waiting_job(api: Api) -> str:
    job_id = str(api.post_job({"prompt": "ask", "session_id": "customer-7"}).body["job_id"])
    wait_until(
        lambda: api.get_job(job_id).body["status"] == "WAITING_FOR_INPUT", what="the job to park"
    )
    return job_id


def _token_record(api: Api, job_id: str) -> dict[str, Any]:
    obj = api.s3.get_object(Bucket=BUCKET, Key=service_keys.job_token_key(job_id))
    record: dict[str, Any] = json.loads(obj["Body"].read())
    return record


def test_waiting_job_shows_its_interrupts(engine_api: Api) -> None:
    job_id = _waiting_job(engine_api)
    body = engine_api.get_job(job_id).body
    assert body["status"] == "WAITING_FOR_INPUT"
    assert body["interrupts"] == INTERRUPTS
    assert body["session_id"] == "customer-7"
    record = _token_record(engine_api, job_id)
    assert record["job_id"] == job_id and record["task_token"]
    assert engine_api.describe(job_id)["status"] == "RUNNING"  # Step Functions' own view


def test_answer_sends_the_task_token_and_the_job_completes(engine_api: Api) -> None:
    job_id = _waiting_job(engine_api)
    reply = engine_api.answer(job_id, {"responses": ANSWERS})
    assert reply.status == 200, reply.body
    assert reply.body == {
        "job_id": job_id,
        "status": "RUNNING",
        "answered": ["interrupt-address", "interrupt-approve"],
    }
    # Resumed (the test machine waits 2 s here): the stored token now belongs to an answered
    # task, and GET must not report the job as waiting any more.
    wait_until(lambda: "WaitStateEntered" in engine_api.history_types(job_id), what="the resume")
    assert _token_record(engine_api, job_id)["task_token"]  # still stored (the API cannot delete)
    resumed = engine_api.get_job(job_id).body
    # Not waiting any more; on a slow machine the 2 s Wait may already have led to success.
    assert resumed["status"] in ("RUNNING", "SUCCEEDED") and "interrupts" not in resumed

    final = wait_until(
        lambda: (b := engine_api.get_job(job_id).body)["status"] == "SUCCEEDED" and b,
        what="success",
    )
    assert final["result"] == {"status": "completed", "interrupt_responses": ANSWERS}
    assert (
        engine_api.history_types(job_id).count("TaskSucceeded") == 1
    )  # SendTaskSuccess reached it

    again = engine_api.answer(job_id, {"responses": ANSWERS})
    assert again.status == 409
    assert "no longer waiting" in again.error_message()


def test_answers_must_match_the_pending_interrupts(engine_api: Api) -> None:
    job_id = _waiting_job(engine_api)
    cases = {
        "missing": [ANSWERS[0]],
        "unknown": [*ANSWERS, {"interruptId": "interrupt-other", "response": 1}],
        "duplicate": [ANSWERS[0], ANSWERS[0], ANSWERS[1]],
    }
    for name, responses in cases.items():
        reply = engine_api.answer(job_id, {"responses": responses})
        assert reply.status == 400, (name, reply.body)
        reply.error_message()
    missing = engine_api.answer(job_id, {"responses": [ANSWERS[0]]}).error_message()
    assert "missing ['interrupt-address']" in missing
    assert "TaskSucceeded" not in engine_api.history_types(job_id)
    assert engine_api.get_job(job_id).body["status"] == "WAITING_FOR_INPUT"


def test_sam_responses_fixture_for_a_job_that_is_not_waiting_is_409(api: Api) -> None:
    job_id = api.post_job({"prompt": "hi"}).body["job_id"]
    event = load_event("post_job_responses.json")  # base64 body as SAM generated it
    event["path"] = f"/jobs/{job_id}/responses"
    reply = api.call(event)
    assert reply.status == 409
    assert "not waiting" in reply.error_message()


def test_responses_for_unknown_or_malformed_job_ids(api: Api) -> None:
    assert api.answer("0123456789abcdef0123456789abcdef", {"responses": ANSWERS}).status == 404
    for bad in ["bad!id", "a" * 81]:
        assert api.answer(bad, {"responses": ANSWERS}).status == 400


def test_stale_token_record_is_not_reported_as_waiting(api: Api) -> None:
    """A record whose task is not the execution's current wait (e.g. already answered)."""
    job_id = api.post_job({"prompt": "hi"}).body["job_id"]
    record = {
        "job_id": job_id,
        "task_token": "stale-token",
        "interrupts": INTERRUPTS,
        "parked_at": 0,
    }
    api.s3.put_object(
        Bucket=BUCKET, Key=service_keys.job_token_key(job_id), Body=json.dumps(record).encode()
    )
    body = api.get_job(job_id).body
    assert body["status"] == "RUNNING" and "interrupts" not in body
    # Answers for the next round's interrupts do not match the stale record: not waiting (409),
    # rather than a 400 that blames the client.
    reply = api.answer(job_id, {"responses": [{"interruptId": "interrupt-next", "response": 1}]})
    assert reply.status == 409, reply.body


def test_answering_the_same_wait_twice_is_409(engine_api: Api) -> None:
    """moto accepts a used task token, so only the API's record refuses it."""
    job_id = _waiting_job(engine_api)
    first = engine_api.answer(job_id, {"responses": ANSWERS})
    assert first.status == 200, first.body
    again = engine_api.answer(job_id, {"responses": ANSWERS})  # before the job has resumed
    assert again.status == 409, again.body
    assert "already answered" in again.error_message()
    other = [{**ANSWERS[0], "response": {"approved": False}}, ANSWERS[1]]
    assert engine_api.answer(job_id, {"responses": other}).status == 409
    final = wait_until(
        lambda: (b := engine_api.get_job(job_id).body)["status"] == "SUCCEEDED" and b,
        what="success",
    )
    assert final["result"]["interrupt_responses"] == ANSWERS  # the first answer, only
    assert engine_api.history_types(job_id).count("TaskSucceeded") == 1


def test_answers_may_name_the_interrupt_id_as_get_shows_it(engine_api: Api) -> None:
    """GET lists interrupts with `id`; POST takes `id` too (and `interruptId`, as before)."""
    job_id = _waiting_job(engine_api)
    shown = engine_api.get_job(job_id).body["interrupts"]
    answers = [
        {"id": i["id"], "response": a["response"]} for i, a in zip(shown, ANSWERS, strict=True)
    ]
    reply = engine_api.answer(job_id, {"responses": answers})
    assert reply.status == 200, reply.body
    assert reply.body["answered"] == sorted(i["id"] for i in shown)
