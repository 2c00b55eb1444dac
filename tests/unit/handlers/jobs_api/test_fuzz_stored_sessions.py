"""Property-based fuzz of stored files behind the jobs API: never a 500, always JSON.

Under tenant isolation a tool may write its own session and its own job's prefix, so whatever
those files hold, `GET /sessions/{id}`, `GET /jobs/{id}/events` and `GET /jobs/{id}` answer
JSON with a status below 500 (200, or the 422 corrupt-session report). The corruptions are
the stored-file fuzz's (tests/unit/session/test_fuzz_stored_files.py); the budget is the
hypothesis profile (`ci` in `make test`, `long` in `make fuzz`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.serverless.contract import service_keys
from elsai.session import FileSessionManager
from elsai.session.layout import keys
from tests.unit.handlers.jobs_api.helpers import BUCKET, Api, Reply, make_event
from tests.unit.session.test_fuzz_stored_files import corrupt, step

pytestmark = [
    pytest.mark.filterwarnings("ignore:No application metrics to publish"),
    pytest.mark.filterwarnings("ignore"),
]
SID, AID = "s-fuzz", "agent"
#: The `api` fixture is one moto account per test; each example restores what it corrupted.
SHARED_ACCOUNT = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def valid_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The files of a valid session (two tool rounds, both bookmarks), by key."""
    root = tmp_path_factory.mktemp("api-store")
    uses = [
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": f"t{i}", "name": "step", "input": {"n": i}}}],
        }
        for i in range(2)
    ]
    agent = Agent(
        model=ScriptedModel([*uses, "finished"], record=False),
        tools=[step],
        config=AgentConfig(
            agent_id=AID,
            session_manager=FileSessionManager(session_id=SID, storage_dir=str(root), fsync=False),
            checkpoint=CheckpointConfig(position="both"),
        ),
    )
    assert agent("go").stop_reason == "end_turn"
    files = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert keys.checkpoint_key(SID, AID) in files and keys.message_key(SID, AID, 3) in files
    return files


@pytest.fixture
def stored(api: Api, valid_files: dict[str, bytes]) -> Iterator[str]:
    """The valid session uploaded to the API's bucket, and a job on it; yields the job id."""
    for key, data in valid_files.items():
        api.s3.put_object(Bucket=BUCKET, Key=key, Body=data)
    yield str(api.post_job({"prompt": "hello", "session_id": SID}).body["job_id"])


def _events(api: Api, job_id: str) -> Reply:
    event = make_event("get_job.json", path=f"/jobs/{job_id}/events")
    event["resource"] = "/jobs/{job_id}/events"
    event["queryStringParameters"] = event["multiValueQueryStringParameters"] = None
    return api.call(event)


def _assert_json_below_500(reply: Reply) -> None:
    assert reply.status < 500, (reply.status, reply.body)
    assert isinstance(reply.body, dict), reply.body
    if reply.status >= 400:
        assert isinstance(reply.body.get("error"), str), reply.body


KINDS = {
    "session": keys.session_key(SID),
    "agent": keys.agent_key(SID, AID),
    "checkpoint": keys.checkpoint_key(SID, AID),
    "message": keys.message_key(SID, AID, 3),
}


@pytest.mark.parametrize("kind", list(KINDS))
@SHARED_ACCOUNT
@given(data=st.data())
def test_the_inspection_routes_answer_json_below_500_for_a_corrupt_file(
    api: Api, valid_files: dict[str, bytes], stored: str, kind: str, data: st.DataObject
) -> None:
    key = KINDS[kind]
    api.s3.put_object(Bucket=BUCKET, Key=key, Body=corrupt(data, valid_files[key]))
    try:
        _assert_json_below_500(api.get_session(SID))
        _assert_json_below_500(_events(api, stored))
    finally:
        api.s3.put_object(Bucket=BUCKET, Key=key, Body=valid_files[key])


VALID_CANCEL = b'{"job_id": "JOB", "requested_at": "2100-01-01T00:00:00Z"}'


@SHARED_ACCOUNT
@given(data=st.data())
def test_a_corrupt_cancel_record_never_breaks_get_job(
    api: Api, stored: str, data: st.DataObject
) -> None:
    if api.describe(stored)["status"] == "RUNNING":
        api.sfn.stop_execution(executionArn=api.execution_arn(stored))
    valid = VALID_CANCEL.replace(b"JOB", stored.encode())
    body = corrupt(data, valid)
    api.s3.put_object(Bucket=BUCKET, Key=service_keys.job_cancel_key(stored), Body=body)
    reply = api.get_job(stored)
    _assert_json_below_500(reply)
    assert reply.status == 200
    still_valid = _same_record(body, valid)
    assert reply.body["status"] == ("CANCELLED" if still_valid else "ABORTED"), body


def _same_record(body: bytes, valid: bytes) -> bool:
    """Whether `body` is still the valid record (a corruption may leave it equal)."""
    try:
        parsed: Any = json.loads(body)
    except ValueError:
        return False
    return bool(parsed == json.loads(valid))
