"""The cancel record is untrusted data: only a valid one turns ABORTED into CANCELLED.

Under tenant isolation a tool may write its own job's prefix, so a forged or corrupt
``jobs/<id>/cancelled.json`` must never break ``GET /jobs/{id}``: it is no cancel request.
"""

from __future__ import annotations

import json

import pytest

from elsai.serverless.contract import service_keys
from tests.unit.handlers.jobs_api.helpers import BUCKET, Api, make_event

pytestmark = pytest.mark.filterwarnings("ignore:No application metrics to publish")

GARBAGE = {
    "not JSON": b"\x00\xffnot json{",
    "truncated": b'{"job_id": "j',
    "a list": b"[1, 2]",
    "wrong types": json.dumps({"job_id": 7, "requested_at": []}).encode(),
    "naive timestamp": json.dumps({"job_id": "X", "requested_at": "2100-01-01T00:00:00"}).encode(),
    "huge number": json.dumps({"job_id": "X", "requested_at": 10**30}).encode(),
    "another job": json.dumps({"job_id": "other", "requested_at": "2100-01-01T00:00:00Z"}).encode(),
    "deep nesting": b"[" * 5000 + b"]" * 5000,
}


def _stopped_job(api: Api) -> str:
    job_id = str(api.post_job({"prompt": "hi"}).body["job_id"])
    api.sfn.stop_execution(executionArn=api.execution_arn(job_id))
    return job_id


def test_a_valid_record_makes_an_aborted_job_cancelled(api: Api) -> None:
    job_id = _stopped_job(api)
    record = {"job_id": job_id, "requested_at": "2100-01-01T00:00:00Z"}
    api.s3.put_object(
        Bucket=BUCKET, Key=service_keys.job_cancel_key(job_id), Body=json.dumps(record).encode()
    )
    reply = api.get_job(job_id)
    assert reply.status == 200 and reply.body["status"] == "CANCELLED", reply.body


@pytest.mark.parametrize("kind", list(GARBAGE))
def test_a_corrupt_record_is_no_cancel_request(api: Api, kind: str) -> None:
    job_id = _stopped_job(api)
    body = GARBAGE[kind].replace(b'"X"', json.dumps(job_id).encode())
    api.s3.put_object(Bucket=BUCKET, Key=service_keys.job_cancel_key(job_id), Body=body)
    reply = api.get_job(job_id)
    assert reply.status == 200, reply.body
    assert reply.body["status"] == "ABORTED", reply.body


def test_cancel_replaces_a_forged_record_with_a_valid_one(api: Api) -> None:
    job_id = str(api.post_job({"prompt": "hi"}).body["job_id"])
    api.s3.put_object(Bucket=BUCKET, Key=service_keys.job_cancel_key(job_id), Body=b"garbage")
    event = make_event("get_job.json", method="DELETE", path=f"/jobs/{job_id}")
    assert api.call(event).status == 200
    assert api.get_job(job_id).body["status"] == "CANCELLED"
    stored = api.s3.get_object(Bucket=BUCKET, Key=service_keys.job_cancel_key(job_id))[
        "Body"
    ].read()
    assert json.loads(stored)["job_id"] == job_id
