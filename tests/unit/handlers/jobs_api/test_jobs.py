"""POST /jobs and GET /jobs/{id}: starting, idempotency, and every status a job can show."""

from __future__ import annotations

import json

from tests.unit.handlers.jobs_api.helpers import Api, load_event, make_event, wait_until


def test_sam_fixture_starts_a_job_with_defaults(api: Api) -> None:
    """The unmodified SAM event (base64 body, SAM's headers and query string) works."""
    reply = api.call(load_event("post_jobs.json"))
    assert reply.status == 202, reply.body
    job_id = reply.body["job_id"]
    assert reply.body == {
        "job_id": job_id,
        "session_id": job_id,
        "agent_id": "agent",
        "status": "RUNNING",
    }
    assert reply.headers["location"] == f"/jobs/{job_id}"
    assert reply.headers["idempotent-replayed"] == "false"
    execution = api.describe(job_id)
    assert execution["status"] == "RUNNING"
    assert json.loads(execution["input"]) == {
        "session_id": job_id,  # session_id defaults to the job id
        "agent_id": "agent",
        "prompt": "Process orders 1, 2 and 3",
    }


def test_explicit_session_and_agent_reach_the_execution_input(api: Api) -> None:
    reply = api.call(load_event("post_jobs_with_ids.json"))
    assert reply.status == 202, reply.body
    assert (reply.body["session_id"], reply.body["agent_id"]) == ("customer-42", "fulfilment")
    execution = api.describe(reply.body["job_id"])
    assert json.loads(execution["input"]) == {
        "session_id": "customer-42",
        "agent_id": "fulfilment",
        "prompt": "Process order 7",
    }


def test_jobs_without_a_key_are_distinct(api: Api) -> None:
    first = api.post_job({"prompt": "hi"})
    second = api.post_job({"prompt": "hi"})
    assert first.status == second.status == 202
    assert first.body["job_id"] != second.body["job_id"]
    assert len(api.executions()) == 2


def test_idempotency_key_replays_the_same_job(api: Api) -> None:
    body = {"prompt": "Process order 9", "session_id": "s-9"}
    first = api.post_job(body, headers={"Idempotency-Key": "order-9"})
    again = api.post_job(
        body, headers={"idempotency-key": "order-9"}
    )  # header names are case-insensitive
    assert first.status == again.status == 202
    assert again.body == first.body
    assert (first.headers["idempotent-replayed"], again.headers["idempotent-replayed"]) == (
        "false",
        "true",
    )
    assert len(api.executions()) == 1
    assert api.executions()[0]["name"] == first.body["job_id"]


def test_idempotency_key_with_another_body_conflicts(api: Api) -> None:
    assert api.post_job({"prompt": "one"}, headers={"Idempotency-Key": "k"}).status == 202
    reply = api.post_job({"prompt": "two"}, headers={"Idempotency-Key": "k"})
    assert reply.status == 409
    assert "different request body" in reply.error_message()
    assert len(api.executions()) == 1


def test_idempotent_retry_after_the_job_ended_is_still_a_replay(api: Api) -> None:
    """Step Functions answers ExecutionAlreadyExists once the execution closed, same input or not."""
    body = {"prompt": "once"}
    first = api.post_job(body, headers={"Idempotency-Key": "retry-me"})
    api.sfn.stop_execution(executionArn=api.execution_arn(first.body["job_id"]))
    again = api.post_job(body, headers={"Idempotency-Key": "retry-me"})
    assert again.status == 202, again.body
    assert again.body["job_id"] == first.body["job_id"]
    assert again.headers["idempotent-replayed"] == "true"
    assert again.body["status"] == "ABORTED"  # a replay shows where the job is now
    assert api.post_job({"prompt": "other"}, headers={"Idempotency-Key": "retry-me"}).status == 409
    assert len(api.executions()) == 1


def test_bad_idempotency_keys_are_refused(api: Api) -> None:
    for key in ["", "k" * 257, ["a", "b"]]:
        reply = api.post_job({"prompt": "hi"}, headers={"Idempotency-Key": key})
        assert reply.status == 400, (key, reply.body)
        reply.error_message()
    assert api.executions() == []


def test_large_non_ascii_prompt_is_sent_unescaped(api: Api) -> None:
    """100,000 'é' is 200 KB as UTF-8 (fits) but 600 KB as \\u escapes (would not)."""
    reply = api.post_job({"prompt": "é" * 100_000})
    assert reply.status == 202, reply.body
    assert json.loads(api.describe(reply.body["job_id"])["input"])["prompt"] == "é" * 100_000


def test_prompt_over_the_step_functions_input_cap_is_413(api: Api) -> None:
    reply = api.post_job({"prompt": "😀" * 100_000})  # 400 KB of UTF-8
    assert reply.status == 413
    assert "256 KiB" in reply.error_message()
    assert api.executions() == []


def test_ids_the_session_store_would_refuse_are_400(api: Api) -> None:
    for body in [
        {"prompt": "x", "session_id": ".."},
        {"prompt": "x", "session_id": "a..b"},
        {"prompt": "x", "agent_id": ".."},
        {"prompt": "x", "session_id": "a/b"},
        {"prompt": "x", "agent_id": None},
    ]:
        reply = api.post_job(body)
        assert reply.status == 400, (body, reply.body)
        assert reply.body["details"], reply.body
    assert api.executions() == []


def test_get_running_job(api: Api) -> None:
    job_id = api.call(load_event("post_jobs_with_ids.json")).body["job_id"]
    reply = api.get_job(job_id)
    assert reply.status == 200
    body = reply.body
    assert body["status"] == "RUNNING"
    assert (body["job_id"], body["session_id"], body["agent_id"]) == (
        job_id,
        "customer-42",
        "fulfilment",
    )
    assert body["started_at"]
    assert "result" not in body and "error" not in body and "interrupts" not in body


def test_get_aborted_job_reports_an_error(api: Api) -> None:
    job_id = api.post_job({"prompt": "hi"}).body["job_id"]
    api.sfn.stop_execution(
        executionArn=api.execution_arn(job_id), error="Cancelled", cause="by operator"
    )
    body = api.get_job(job_id).body
    assert body["status"] == "ABORTED"
    assert "error" in body and "stopped_at" in body


def test_get_succeeded_job_returns_the_result(engine_api: Api) -> None:
    job_id = engine_api.post_job({"prompt": "Process order 1"}).body["job_id"]
    body = wait_until(
        lambda: (b := engine_api.get_job(job_id).body)["status"] != "RUNNING" and b, what="job end"
    )
    assert body["status"] == "SUCCEEDED", body
    assert body["result"] == {"status": "completed", "stop_reason": "end_turn", "text": "All done."}
    assert "error" not in body and body["stopped_at"]


def test_get_failed_job_returns_error_and_cause(engine_api: Api) -> None:
    job_id = engine_api.post_job({"prompt": "fail"}).body["job_id"]
    body = wait_until(
        lambda: (b := engine_api.get_job(job_id).body)["status"] != "RUNNING" and b, what="job end"
    )
    assert body["status"] == "FAILED", body
    assert body["error"] == {
        "error": "SliceBudgetExhausted",
        "cause": "the job used all of its slices",
    }
    assert "result" not in body


def test_unknown_job_is_404_and_bad_ids_are_400(api: Api) -> None:
    reply = api.get_job("0123456789abcdef0123456789abcdef")
    assert reply.status == 404 and "no job" in reply.error_message()
    for bad in ["bad!id", "a" * 81, "a.b", "%2e%2e", "é"]:
        reply = api.get_job(bad)
        assert reply.status == 400, (bad, reply.body)
        reply.error_message()


def test_get_job_ignores_sam_query_string_and_body(api: Api) -> None:
    """The SAM GET fixture carries ?foo=bar and an empty base64 body: both are ignored."""
    job_id = api.post_job({"prompt": "hi"}).body["job_id"]
    event = load_event("get_job.json")
    event["path"] = f"/jobs/{job_id}"
    assert event["queryStringParameters"] == {"foo": "bar"}
    assert api.call(event).body["status"] == "RUNNING"


def test_base64_json_body_is_decoded(api: Api) -> None:
    import base64

    event = make_event("post_jobs.json")
    event["body"] = base64.b64encode(json.dumps({"prompt": "b64"}).encode()).decode()
    event["isBase64Encoded"] = True
    reply = api.call(event)
    assert reply.status == 202, reply.body
    assert json.loads(api.describe(reply.body["job_id"])["input"])["prompt"] == "b64"
