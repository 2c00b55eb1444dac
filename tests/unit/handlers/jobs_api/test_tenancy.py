"""Tenant isolation in the jobs API: callers own their jobs and sessions; others get 404.

Principal A starts a job on session ``s1``; principal B can neither read, poll, answer,
cancel nor resume it, and B's own ``s1`` is a different session. The real handler runs
over moto (the park step through the real agent handler, which finds A's storage prefix
from the job id).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from elsai.agent import AgentConfig
from elsai.checkpoint.config import CheckpointConfig
from elsai.serverless.contract import service_keys
from elsai.serverless.scoped import job_owner_tag, job_storage_prefix
from elsai.session import S3SessionManager
from tests.unit.handlers.jobs_api.helpers import ACCOUNT, BUCKET, Api, Reply, make_event, wait_until

ALICE = f"arn:aws:sts::{ACCOUNT}:assumed-role/app-users/alice"
BOB = f"arn:aws:sts::{ACCOUNT}:assumed-role/app-users/bob"
ADMIN = f"arn:aws:sts::{ACCOUNT}:assumed-role/ops-admin/pager"
ANSWERS = [
    {"interruptId": "interrupt-approve", "response": {"approved": True}},
    {"interruptId": "interrupt-address", "response": "Main St 1"},
]


@pytest.fixture(autouse=True)
def _isolation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELSAI_TENANCY", "owner")
    monkeypatch.setenv("ELSAI_ADMIN_ARNS", f"arn:aws:iam::{ACCOUNT}:role/ops/ops-admin")
    monkeypatch.delenv("ELSAI_AUTH", raising=False)


class Caller:
    """One principal's view of the API."""

    def __init__(self, api: Api, arn: str | None) -> None:
        self.api, self.arn = api, arn

    def call(self, fixture: str, **kwargs: Any) -> Reply:
        return self.api.call(make_event(fixture, caller=self.arn, **kwargs))

    def start(self, body: dict[str, Any], key: str | None = None) -> Reply:
        headers: dict[str, Any] = {"Idempotency-Key": key} if key else {}
        return self.call("post_jobs.json", body=body, headers=headers)

    def get(self, path: str) -> Reply:
        event = make_event("get_job.json", path=path, caller=self.arn)
        event["queryStringParameters"] = event["multiValueQueryStringParameters"] = None
        return self.api.call(event)

    def list(self) -> Reply:
        return self.get("/jobs")

    def answer(self, job_id: str) -> Reply:
        path = f"/jobs/{job_id}/responses"
        return self.call("post_job_responses.json", path=path, body={"responses": ANSWERS})

    def cancel(self, job_id: str) -> Reply:
        return self.call("get_job.json", method="DELETE", path=f"/jobs/{job_id}")

    def session(self, session_id: str) -> Reply:
        return self.call("get_session.json", path=f"/sessions/{session_id}")


def _tag(arn: str) -> str:
    return service_keys.owner_tag(f"iam:{arn}")


def test_another_caller_cannot_read_poll_answer_or_cancel_a_job(engine_api: Api) -> None:
    alice, bob = Caller(engine_api, ALICE), Caller(engine_api, BOB)
    started = alice.start({"prompt": "ask", "session_id": "s1"})
    assert started.status == 202, started.body
    job_id = started.body["job_id"]
    assert job_owner_tag(job_id) == _tag(ALICE)
    wait_until(lambda: alice.get(f"/jobs/{job_id}").body["status"] == "WAITING_FOR_INPUT",
               what="A's job to park")  # fmt: skip
    # The park step (the real agent handler) wrote the token under A's prefix only.
    token_key = job_storage_prefix(job_id) + service_keys.job_token_key(job_id)
    assert engine_api.s3.get_object(Bucket=BUCKET, Key=token_key)["Body"].read()

    missing = job_id[:-4] + "0000"  # same owner tag, never started
    never = alice.get(f"/jobs/{missing}")
    assert never.status == 404
    for reply in (
        bob.get(f"/jobs/{job_id}"),
        bob.get(f"/jobs/{job_id}/events"),
        bob.answer(job_id),
        bob.cancel(job_id),
    ):
        # Not 403: the answer must not confirm that the id exists.
        assert reply.status == 404, reply.body
        assert reply.body == {"error": f"no job {job_id!r}"}
    assert engine_api.describe(job_id)["status"] == "RUNNING"  # nothing B did reached it

    assert alice.get(f"/jobs/{job_id}/events").status == 200
    mine = alice.answer(job_id)
    assert mine.status == 200, mine.body
    done = wait_until(lambda: (r := alice.get(f"/jobs/{job_id}")).body["status"] == "SUCCEEDED"
                      and r, what="A's job to finish")  # fmt: skip
    assert done.status == 200


def test_same_session_id_is_two_sessions_and_a_job_cannot_resume_anothers(api: Api) -> None:
    alice, bob = Caller(api, ALICE), Caller(api, BOB)
    _agent_turn(ALICE, "s1", "Process order 1")
    assert bob.session("s1").status == 404  # A's s1 is invisible to B
    _agent_turn(BOB, "s1", "Process orders 7 and 8")
    mine, theirs = alice.session("s1").body, bob.session("s1").body
    assert mine["agents"][0]["last_message"]["text"] == "All 1 orders processed: 1."
    assert theirs["agents"][0]["last_message"]["text"] == "All 2 orders processed: 7, 8."

    # B starting a job on "s1" runs it in B's namespace: its slices resume B's s1, never A's.
    job = bob.start({"prompt": "continue", "session_id": "s1"}).body
    assert job_storage_prefix(job["job_id"]) == service_keys.owner_prefix(_tag(BOB))
    assert json.loads(api.describe(job["job_id"])["input"])["session_id"] == "s1"


def test_listing_shows_own_jobs_and_an_admin_sees_all(api: Api) -> None:
    alice, bob = Caller(api, ALICE), Caller(api, BOB)
    a = alice.start({"prompt": "a"}).body["job_id"]
    b = bob.start({"prompt": "b"}).body["job_id"]
    assert [j["job_id"] for j in alice.list().body["jobs"]] == [a]
    assert [j["job_id"] for j in bob.list().body["jobs"]] == [b]
    admin = Caller(api, ADMIN)  # an assumed-role session of a role listed by its role ARN
    assert sorted(j["job_id"] for j in admin.list().body["jobs"]) == sorted([a, b])
    assert admin.get(f"/jobs/{a}").status == 200
    assert admin.get(f"/jobs/{a}/events").status == 200


def test_the_same_idempotency_key_from_two_callers_starts_two_jobs(api: Api) -> None:
    body = {"prompt": "Process order 9", "session_id": "s-9"}
    first = Caller(api, ALICE).start(body, key="order-9")
    second = Caller(api, BOB).start(body, key="order-9")
    again = Caller(api, ALICE).start(body, key="order-9")
    assert first.status == second.status == again.status == 202
    assert first.body["job_id"] != second.body["job_id"]
    assert again.body["job_id"] == first.body["job_id"]
    assert again.headers["idempotent-replayed"] == "true"
    assert len(api.executions()) == 2
    longest_continuation = first.body["job_id"] + "-c100"
    assert len(longest_continuation) <= 80  # Step Functions' cap on execution names


def test_two_sessions_of_one_role_are_two_owners(api: Api) -> None:
    job = Caller(api, ALICE).start({"prompt": "a"}).body["job_id"]
    other_session = f"arn:aws:sts::{ACCOUNT}:assumed-role/app-users/alice-laptop"
    assert Caller(api, other_session).get(f"/jobs/{job}").status == 404
    assert Caller(api, ALICE).get(f"/jobs/{job}").status == 200


@pytest.mark.parametrize(
    "arn", [None, "", "not-an-arn", "arn:aws:s3:::bucket", "arn:aws:iam::1:user/x\n"]
)
def test_missing_or_malformed_identity_is_401_on_every_route(api: Api, arn: str | None) -> None:
    caller = Caller(api, arn)
    for reply in (
        caller.start({"prompt": "x"}),
        caller.list(),
        caller.get("/jobs/abc"),
        caller.get("/jobs/abc/events"),
        caller.answer("abc"),
        caller.cancel("abc"),
        caller.session("s1"),
    ):
        assert reply.status == 401, (arn, reply.body)
        assert "identity" in reply.error_message()
    assert api.executions() == []


def test_cognito_sub_is_the_owner(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ELSAI_AUTH", "cognito")

    monkeypatch.setenv("ELSAI_ADMIN_GROUPS", "ops")

    def call(sub: str | None, fixture: str, groups: str = "", **kwargs: Any) -> Reply:
        event = make_event(fixture, caller=None, **kwargs)  # no SigV4 identity behind Cognito
        claims = {"sub": sub, "cognito:groups": groups} if sub else {}
        event["requestContext"]["authorizer"] = {"claims": claims}
        return api.call(event)

    job = call("sub-1", "post_jobs.json", body={"prompt": "x"}).body["job_id"]
    assert job_owner_tag(job) == service_keys.owner_tag("cognito:sub-1")
    assert call("sub-1", "get_job.json", path=f"/jobs/{job}").status == 200
    assert call("sub-2", "get_job.json", path=f"/jobs/{job}").status == 404
    assert call(None, "get_job.json", path=f"/jobs/{job}").status == 401
    assert call("sub-3", "get_job.json", path=f"/jobs/{job}", groups="[dev ops]").status == 200


def _agent_turn(arn: str, session_id: str, prompt: str) -> None:
    """A finished turn of the example agent in `arn`'s namespace (as a slice would write it)."""
    import example_agent

    manager = S3SessionManager(
        session_id=session_id, bucket=BUCKET, prefix=service_keys.owner_prefix(_tag(arn))
    )
    config = AgentConfig(session_manager=manager, checkpoint=CheckpointConfig(position="both"))
    example_agent.build_agent(config)(prompt, invocation_id=f"exec-{arn[-5:]}")


def _session_as(api: Api, arn: str, session_id: str, owner: list[str] | None) -> Reply:
    event = make_event("get_session.json", path=f"/sessions/{session_id}", caller=arn)
    event["pathParameters"] = {"session_id": session_id}
    event["queryStringParameters"] = {"owner": owner[-1]} if owner else None
    event["multiValueQueryStringParameters"] = {"owner": owner} if owner else None
    return api.call(event)


def test_an_admin_reads_any_owners_session_by_its_tag_and_nobody_else_can(api: Api) -> None:
    _agent_turn(ALICE, "s1", "Process order 1")
    tag = _tag(ALICE)
    as_admin = _session_as(api, ADMIN, "s1", [tag])
    assert as_admin.status == 200, as_admin.body
    assert as_admin.body["agents"][0]["last_message"]["text"] == "All 1 orders processed: 1."
    assert _session_as(api, ADMIN, "s1", None).status == 404  # without owner: the admin's own
    # Another caller naming A's tag learns nothing: the answer of a session that is not there.
    refused = _session_as(api, BOB, "s1", [tag])
    assert (refused.status, refused.body) == (404, {"error": "no session 's1'"})
    assert _session_as(api, ALICE, "s1", [tag]).status == 200  # one's own tag is fine
    for bad in (["not-a-tag"], [tag.upper()], [tag, tag]):
        assert _session_as(api, ADMIN, "s1", bad).status == 400, bad


def test_owner_is_refused_without_isolation(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ELSAI_TENANCY")
    reply = _session_as(api, ALICE, "s1", [_tag(ALICE)])
    assert reply.status == 400 and "tenant isolation" in reply.body["error"], reply.body


def test_a_job_from_before_isolation_stays_readable_by_admins_only(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration: a job started while the stack ran unisolated (an untagged id, its records at
    the bucket root) is still there for an admin; to every other caller it is a 404."""
    monkeypatch.delenv("ELSAI_TENANCY")
    old = Caller(api, ALICE).start({"prompt": "a", "session_id": "old-s"}).body["job_id"]
    assert job_owner_tag(old) is None
    monkeypatch.setenv("ELSAI_TENANCY", "owner")  # the redeploy with isolation on
    admin = Caller(api, ADMIN)
    assert admin.get(f"/jobs/{old}").status == 200
    assert admin.get(f"/jobs/{old}/events").status == 200
    assert old in {j["job_id"] for j in admin.list().body["jobs"]}
    for caller in (ALICE, BOB):
        assert Caller(api, caller).get(f"/jobs/{old}").status == 404
        assert old not in {j["job_id"] for j in Caller(api, caller).list().body["jobs"]}
    assert admin.cancel(old).status == 200
    cancelled = api.s3.get_object(
        Bucket=BUCKET, Key=service_keys.job_cancel_key(old)
    )  # at the root
    assert json.loads(cancelled["Body"].read())["job_id"] == old
