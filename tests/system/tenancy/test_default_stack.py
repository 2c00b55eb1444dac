"""The default stack isolates its callers: this repository's synthesized template, run locally.

Nothing is opted in: `LocalRuntime` runs the template `cdk synth` makes from cdk.json (the
real API handler with the environment the template gives it, the real agent handler as child
processes taking the per-job tenant role). Two local callers are two IAM users of the local
account, as `elsai jobs --local --caller NAME` makes them; an admin is an ARN the
``adminArns`` knob would list (its environment variable, set here).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from elsai.local import LocalRuntime
from elsai.local.shapes import ACCOUNT, caller_arn
from elsai.serverless.contract import service_keys
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


def _call(
    rt: LocalRuntime, caller: str, method: str, path: str, body: Any = None
) -> tuple[int, Any]:
    resource = path
    params: dict[str, str] = {}
    parts = path.strip("/").split("/")
    if len(parts) >= 2:
        name = "job_id" if parts[0] == "jobs" else "session_id"
        params = {name: parts[1]}
        resource = "/".join(["", parts[0], "{" + name + "}", *parts[2:]])
    status, answer = rt.api(method, path, resource=resource, body=body, caller=caller,
                            path_parameters=params or None)  # fmt: skip
    return status, answer


def _run(rt: LocalRuntime, caller: str, session_id: str) -> dict[str, Any]:
    status, job = _call(rt, caller, "POST", "/jobs", {"prompt": "hi", "session_id": session_id})
    assert status == 202, job
    rt.caller = caller
    try:
        assert rt.wait(job["job_id"], timeout=120)["status"] == "SUCCEEDED"
    finally:
        rt.caller = "local"
    return dict(job)


def _tag(caller: str) -> str:
    return service_keys.owner_tag(f"iam:{caller_arn(caller)}")


def test_another_caller_gets_404_on_every_route_and_lists_only_its_own(
    rt: LocalRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = _run(rt, "alice", "s1")
    bob = _run(rt, "bob", "s1")  # the same session id: another session
    bob_again = _run(rt, "bob", "s1")  # B's s1 now holds two turns, A's one
    job_a = alice["job_id"]
    assert job_owner_tag(job_a) == _tag("alice") and job_owner_tag(bob["job_id"]) == _tag("bob")

    answers = {"responses": [{"interruptId": "x", "response": "yes"}]}
    for method, path, body in [
        ("GET", f"/jobs/{job_a}", None),
        ("GET", f"/jobs/{job_a}/events", None),
        ("POST", f"/jobs/{job_a}/responses", answers),
        ("DELETE", f"/jobs/{job_a}", None),
        ("POST", f"/jobs/{job_a}/upgrade", None),  # 404, not the owner's 409: nothing leaks
    ]:
        assert _call(rt, "bob", method, path, body) == (404, {"error": f"no job {job_a!r}"})
    # B's GET /sessions/s1 is B's own s1 (two turns), never A's (one turn). Both ran the same
    # script, so only the number of turns tells them apart: equal views could be two runs in
    # the same second.
    status, session = _call(rt, "bob", "GET", "/sessions/s1")
    assert status == 200, session
    own_a = _call(rt, "alice", "GET", "/sessions/s1")[1]
    assert [a["message_count"] for a in session["agents"]] == [4]
    assert [a["message_count"] for a in own_a["agents"]] == [2]
    assert _call(rt, "bob", "GET", "/sessions/only-alices")[0] == 404
    assert _call(rt, "alice", "GET", f"/jobs/{job_a}")[1]["status"] == "SUCCEEDED"
    stored = {o["Key"] for o in rt.s3.list_objects_v2(Bucket=rt.bucket)["Contents"]}
    assert not [k for k in stored if k.endswith("cancelled.json")]  # B's DELETE reached nothing
    assert not [k for k in stored if not k.startswith(service_keys.OWNERS_PREFIX)]  # no root keys

    def listed(caller: str) -> set[str]:
        status, page = _call(rt, caller, "GET", "/jobs")
        assert status == 200, page
        return {j["job_id"] for j in page["jobs"]}

    assert listed("bob") == {bob["job_id"], bob_again["job_id"]}
    assert listed("alice") == {job_a}
    monkeypatch.setenv("ELSAI_ADMIN_ARNS", f"arn:aws:iam::{ACCOUNT}:user/ops")
    assert listed("ops") == {job_a, bob["job_id"], bob_again["job_id"]}
    assert _call(rt, "ops", "GET", f"/jobs/{job_a}")[0] == 200


def test_local_callers_over_http_and_the_cli(
    rt: LocalRuntime, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`elsai jobs --local --caller NAME`: the header the local server reads, end to end."""
    from elsai.cli import main
    from elsai.cli.jobs.client import ApiError, JobsClient
    from elsai.local.http import LocalHttpApi

    job = _run(rt, "carol", "s-http")["job_id"]
    server = LocalHttpApi(rt).start()
    try:
        assert JobsClient(server.url, sign=False, caller="carol").status(job)["job_id"] == job
        with pytest.raises(ApiError) as refused:
            JobsClient(server.url, sign=False, caller="dave").status(job)
        assert refused.value.status == 404
        with pytest.raises(ApiError) as bad:
            JobsClient(server.url, sign=False, caller="no/slashes").status(job)
        assert bad.value.status == 400
        monkeypatch.setattr("elsai.cli.jobs.command.local_url", lambda: server.url)
        assert main(["jobs", "status", job, "--local", "--caller", "carol", "--json"]) == 0
        assert job in capsys.readouterr().out
        assert main(["jobs", "status", job, "--local", "--caller", "dave"]) == 2
        assert "no job" in capsys.readouterr().err
    finally:
        server.close()
    with pytest.raises(SystemExit, match="--caller only applies to --local"):
        main(["jobs", "status", job, "--api-url", "https://x.invalid/v1", "--caller", "carol"])
