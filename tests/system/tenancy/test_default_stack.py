"""The default stack isolates its callers: this repository's synthesized template, run locally.

Nothing is opted in: `LocalRuntime` runs the template `cdk synth` makes from cdk.json (the
real API handler with the environment the template gives it, the real agent handler as child
processes taking the per-job tenant role). Two local callers are two IAM users of the local
account, as `elsai jobs --local --caller NAME` makes them; an admin is an ARN the
``adminArns`` knob would list (its environment variable, set here).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from elsai.client import ApiError
from elsai.local import LocalRuntime
from elsai.local.shapes import ACCOUNT, caller_arn
from elsai.serverless.contract import service_keys
from elsai.serverless.contract.jobs_api import StartedJob
from elsai.serverless.scoped import job_owner_tag

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def rt() -> Iterator[LocalRuntime]:
    runtime = LocalRuntime(
        project=ROOT,
        agent_factory="tenancy_agents:build_agent",
        fast_retries=True,
        pythonpath=(str(HERE),),
    )
    with runtime:
        yield runtime


def _run(rt: LocalRuntime, caller: str, session_id: str) -> StartedJob:
    job = rt.jobs_as(caller).start("hi", session_id=session_id)
    rt.caller = caller
    try:
        assert rt.wait(job.job_id, timeout=120).status == "SUCCEEDED"
    finally:
        rt.caller = "local"
    return job


def _refused(call: Callable[[], object]) -> tuple[int, Any]:
    """The status and body the API refused `call` with."""
    with pytest.raises(ApiError) as refused:
        call()
    return refused.value.status, refused.value.body


def _tag(caller: str) -> str:
    return service_keys.owner_tag(f"iam:{caller_arn(caller)}")


def test_another_caller_gets_404_on_every_route_and_lists_only_its_own(
    rt: LocalRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = _run(rt, "alice", "s1")
    bob = _run(rt, "bob", "s1")  # the same session id: another session
    bob_again = _run(rt, "bob", "s1")  # B's s1 now holds two turns, A's one
    job_a = alice.job_id
    assert job_owner_tag(job_a) == _tag("alice") and job_owner_tag(bob.job_id) == _tag("bob")

    as_bob = rt.jobs_as("bob")
    for call in (
        lambda: as_bob.get(job_a),
        lambda: as_bob.events(job_a),
        lambda: as_bob.answer(job_a, [{"interruptId": "x", "response": "yes"}]),
        lambda: as_bob.cancel(job_a),
        lambda: as_bob.upgrade(job_a),  # 404, not the owner's 409: nothing leaks
    ):
        assert _refused(call) == (404, {"error": f"no job {job_a!r}"})
    # B's GET /sessions/s1 is B's own s1 (two turns), never A's (one turn). Both ran the same
    # script, so only the number of turns tells them apart: equal views could be two runs in
    # the same second.
    session = as_bob.session("s1")
    own_a = rt.jobs_as("alice").session("s1")
    assert [a.message_count for a in session.agents] == [4]
    assert [a.message_count for a in own_a.agents] == [2]
    assert _refused(lambda: as_bob.session("only-alices"))[0] == 404
    assert rt.jobs_as("alice").get(job_a).status == "SUCCEEDED"
    stored = {o["Key"] for o in rt.s3.list_objects_v2(Bucket=rt.bucket)["Contents"]}
    assert not [k for k in stored if k.endswith("cancelled.json")]  # B's DELETE reached nothing
    assert not [k for k in stored if not k.startswith(service_keys.OWNERS_PREFIX)]  # no root keys

    def listed(caller: str) -> set[str]:
        return {j.job_id for j in rt.jobs_as(caller).list().jobs}

    assert listed("bob") == {bob.job_id, bob_again.job_id}
    assert listed("alice") == {job_a}
    monkeypatch.setenv("ELSAI_ADMIN_ARNS", f"arn:aws:iam::{ACCOUNT}:user/ops")
    assert listed("ops") == {job_a, bob.job_id, bob_again.job_id}
    assert rt.jobs_as("ops").get(job_a).job_id == job_a


def test_local_callers_over_http_and_the_cli(
    rt: LocalRuntime, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`elsai jobs --local --caller NAME`: the header the local server reads, end to end."""
    from elsai.cli import main
    from elsai.client import http_client
    from elsai.local.http import LocalHttpApi

    job = _run(rt, "carol", "s-http").job_id
    server = LocalHttpApi(rt).start()
    try:
        assert http_client(server.url, sign=False, caller="carol").get(job).job_id == job
        dave = http_client(server.url, sign=False, caller="dave")
        assert _refused(lambda: dave.get(job))[0] == 404
        unnamed = http_client(server.url, sign=False, caller="no/slashes")
        assert _refused(lambda: unnamed.get(job))[0] == 400
        monkeypatch.setattr("elsai.cli.jobs.command.local_url", lambda: server.url)
        assert main(["jobs", "status", job, "--local", "--caller", "carol", "--json"]) == 0
        assert job in capsys.readouterr().out
        assert main(["jobs", "status", job, "--local", "--caller", "dave"]) == 2
        assert "no job" in capsys.readouterr().err
    finally:
        server.close()
    with pytest.raises(SystemExit, match="--caller only applies to --local"):
        main(["jobs", "status", job, "--api-url", "https://x.invalid/v1", "--caller", "carol"])
