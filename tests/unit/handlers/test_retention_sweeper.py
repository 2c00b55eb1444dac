"""Retention by last activity: real agents write sessions to moto S3 at chosen times, the
sweeper Lambda decides from S3's own LastModified, and a session goes whole or not at all.

Only moto's clock is moved (the time its S3 stamps on a PUT); every call is real boto3.
"""

from __future__ import annotations

import datetime as dt
import json
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.models.scripted import ScriptedModel
from elsai.serverless.retention import sweep_idle_sessions
from elsai.session import S3SessionManager

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)


class Clock:
    """The time moto's S3 stamps on objects (LastModified)."""

    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> dt.datetime:
        return self.now.replace(tzinfo=None)  # moto keeps naive UTC


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    import moto.s3.models

    c = Clock()
    monkeypatch.setattr(moto.s3.models, "utcnow", c)
    yield c


def _turn(bucket: str, session_id: str, prompt: str, prefix: str = "") -> None:
    manager = S3SessionManager(session_id=session_id, bucket=bucket, prefix=prefix)
    agent = Agent(
        model=ScriptedModel([f"answer to {prompt}"]), config=AgentConfig(session_manager=manager)
    )
    agent(prompt)


def _keys(bucket: str, prefix: str) -> list[str]:
    response = boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix=prefix)
    return sorted(o["Key"] for o in response.get("Contents", []))


def _messages(bucket: str, session_id: str) -> list[Any]:
    manager = S3SessionManager(session_id=session_id, bucket=bucket)
    return Agent(model=ScriptedModel([]), config=AgentConfig(session_manager=manager)).messages


def test_active_session_keeps_old_messages_and_idle_one_goes_whole(
    s3_bucket: str, clock: Clock
) -> None:
    clock.now = NOW - dt.timedelta(days=120)
    _turn(s3_bucket, "customer-42", "first order")  # message_0/1 are 120 days old
    _turn(s3_bucket, "idle-7", "one question")
    clock.now = NOW - dt.timedelta(hours=2)
    _turn(s3_bucket, "customer-42", "second order")  # the session is active today
    old = [k for k in _keys(s3_bucket, "session_customer-42/") if k.endswith("message_0.json")]
    assert old, "the first message exists"

    report = sweep_idle_sessions(boto3.client("s3"), s3_bucket, idle_days=90, now=NOW)

    assert report.sessions_seen == 2
    assert report.sessions_deleted == ["idle-7"]
    assert _keys(s3_bucket, "session_idle-7/") == []
    texts = [m["content"][0]["text"] for m in _messages(s3_bucket, "customer-42")]
    assert texts == [
        "first order",
        "answer to first order",
        "second order",
        "answer to second order",
    ]


def test_nothing_is_deleted_before_the_idle_period_or_in_a_dry_run(
    s3_bucket: str, clock: Clock
) -> None:
    clock.now = NOW - dt.timedelta(days=30)
    _turn(s3_bucket, "recent", "hello")
    clock.now = NOW - dt.timedelta(days=200)
    _turn(s3_bucket, "ancient", "hello")
    before = _keys(s3_bucket, "")
    dry = sweep_idle_sessions(boto3.client("s3"), s3_bucket, idle_days=90, now=NOW, dry_run=True)
    assert dry.sessions_deleted == ["ancient"] and dry.objects_deleted > 0
    assert _keys(s3_bucket, "") == before
    kept = sweep_idle_sessions(boto3.client("s3"), s3_bucket, idle_days=365, now=NOW)
    assert kept.sessions_deleted == [] and _keys(s3_bucket, "") == before


def test_objects_outside_sessions_are_never_touched(s3_bucket: str, clock: Clock) -> None:
    clock.now = NOW - dt.timedelta(days=400)
    s3 = boto3.client("s3")
    s3.put_object(Bucket=s3_bucket, Key="jobs/j1/task_token.json", Body=b"{}")
    s3.put_object(Bucket=s3_bucket, Key="session_notes.txt", Body=b"not a session directory")
    report = sweep_idle_sessions(s3, s3_bucket, idle_days=1, now=NOW)
    assert report.sessions_seen == 0
    assert _keys(s3_bucket, "") == ["jobs/j1/task_token.json", "session_notes.txt"]


def test_sweeper_lambda_reads_its_settings(
    s3_bucket: str, clock: Clock, monkeypatch: pytest.MonkeyPatch, moto_server_url: str
) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "elsai-test")  # read at import
    monkeypatch.setenv("AWS_ENDPOINT_URL_SFN", moto_server_url)
    monkeypatch.setenv("ELSAI_STATE_MACHINE_ARN", _machine(boto3.client("stepfunctions")))
    from elsai_lambdas import sweeper

    clock.now = dt.datetime.now(dt.UTC) - dt.timedelta(days=10)
    _turn(s3_bucket, "gone", "hello")
    monkeypatch.setenv("ELSAI_SESSIONS_BUCKET", s3_bucket)
    monkeypatch.setenv("ELSAI_SESSION_IDLE_DAYS", "seven")
    with pytest.raises(RuntimeError, match="ELSAI_SESSION_IDLE_DAYS"):
        sweeper.handler({}, _Context())
    assert _keys(s3_bucket, "session_gone/"), "bad settings delete nothing"
    monkeypatch.setenv("ELSAI_SESSION_IDLE_DAYS", "7")
    out = sweeper.handler({}, _Context())
    assert out["sessions_deleted"] == ["gone"]
    assert _keys(s3_bucket, "session_gone/") == []


def test_bad_idle_days_is_refused() -> None:
    with pytest.raises(ValueError, match="idle_days"):
        sweep_idle_sessions(None, "b", idle_days=0)


class _Context:
    function_name = "sweeper"
    memory_limit_in_mb = 256
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:sweeper"
    aws_request_id = "req-1"


@pytest.fixture
def no_asl_engine(moto_server_url: str) -> Iterator[None]:
    """moto's config is process-global: another test may have turned its ASL engine on, which
    would finish the jobs this test needs RUNNING (as a job parked on its task token is)."""
    url = f"{moto_server_url}/moto-api/config"
    saved = json.loads(urllib.request.urlopen(url).read())
    _post_config(url, {"stepfunctions": {"execute_state_machine": False}})
    yield
    _post_config(url, {"stepfunctions": saved.get("stepfunctions", {})})


def _post_config(url: str, config: dict[str, Any]) -> None:
    request = urllib.request.Request(
        url, data=json.dumps(config).encode(), headers={"Content-Type": "application/json"}
    )
    urllib.request.urlopen(request).read()


def _machine(sfn: Any) -> str:
    definition = '{"StartAt": "Wait", "States": {"Wait": {"Type": "Pass", "End": true}}}'
    role = "arn:aws:iam::123456789012:role/jobs"
    return str(
        sfn.create_state_machine(
            name=f"jobs-{uuid.uuid4().hex[:12]}", definition=definition, roleArn=role
        )["stateMachineArn"]
    )


def test_idle_session_of_a_waiting_job_is_kept_and_one_without_a_live_job_goes(
    s3_bucket: str, clock: Clock, moto_server_url: str, no_asl_engine: None
) -> None:
    from elsai.serverless.retention import live_sessions

    clock.now = NOW - dt.timedelta(days=5)
    _turn(s3_bucket, "waiting-for-approval", "refund orders 1 and 2")
    _turn(s3_bucket, "abandoned", "hello")
    _turn(s3_bucket, "finished", "hello")
    sfn = boto3.client("stepfunctions", endpoint_url=moto_server_url)
    machine = _machine(sfn)
    # Without the execute engine moto keeps an execution RUNNING: a job parked on its
    # waitForTaskToken task (Step Functions has no separate "waiting" status).
    sfn.start_execution(
        stateMachineArn=machine,
        name="job-waiting",
        input='{"session_id": "waiting-for-approval", "agent_id": "default", "prompt": "x"}',
    )
    done = sfn.start_execution(
        stateMachineArn=machine, name="job-done", input='{"session_id": "finished"}'
    )
    sfn.stop_execution(executionArn=done["executionArn"])
    sfn.start_execution(stateMachineArn=machine, name="job-foreign", input='"not an object"')

    report = sweep_idle_sessions(
        boto3.client("s3"),
        s3_bucket,
        idle_days=1,
        now=NOW,
        live=lambda: live_sessions(sfn, machine),
    )

    assert report.sessions_kept_live == ["waiting-for-approval"]
    assert report.sessions_deleted == ["abandoned", "finished"]
    texts = [m["content"][0]["text"] for m in _messages(s3_bucket, "waiting-for-approval")]
    assert texts == ["refund orders 1 and 2", "answer to refund orders 1 and 2"]


def test_the_sweeper_lambda_keeps_live_jobs_and_refuses_a_stringly_dry_run(
    s3_bucket: str,
    clock: Clock,
    moto_server_url: str,
    monkeypatch: pytest.MonkeyPatch,
    no_asl_engine: None,
) -> None:
    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "elsai-test")
    monkeypatch.setenv("AWS_ENDPOINT_URL_SFN", moto_server_url)
    from elsai_lambdas import sweeper

    clock.now = dt.datetime.now(dt.UTC) - dt.timedelta(days=10)
    _turn(s3_bucket, "parked", "approve?")
    sfn = boto3.client("stepfunctions")
    machine = _machine(sfn)
    sfn.start_execution(stateMachineArn=machine, name="j1", input='{"session_id": "parked"}')
    monkeypatch.setenv("ELSAI_SESSIONS_BUCKET", s3_bucket)
    monkeypatch.setenv("ELSAI_SESSION_IDLE_DAYS", "7")
    monkeypatch.setenv("ELSAI_STATE_MACHINE_ARN", machine)
    with pytest.raises(ValueError, match="dry_run"):
        sweeper.handler({"dry_run": "false"}, _Context())
    out = sweeper.handler({}, _Context())
    assert out["sessions_deleted"] == [] and out["sessions_kept_live"] == ["parked"]
    assert _keys(s3_bucket, "session_parked/")


def test_with_isolation_an_idle_session_of_one_owner_goes_and_a_waiting_jobs_of_another_stays(
    s3_bucket: str, clock: Clock, moto_server_url: str, no_asl_engine: None
) -> None:
    """Two owners, the same session id: A's is idle with no job, B's job waits for a person.
    The live job keeps its own owner's session only."""
    from elsai.serverless.contract import service_keys
    from elsai.serverless.retention import live_sessions
    from elsai.serverless.scoped import owned_job_id

    tag_a, tag_b = service_keys.owner_tag("iam:alice"), service_keys.owner_tag("iam:bob")
    prefix_a, prefix_b = service_keys.owner_prefix(tag_a), service_keys.owner_prefix(tag_b)
    clock.now = NOW - dt.timedelta(days=5)
    _turn(s3_bucket, "customer-42", "hello", prefix=prefix_a)
    _turn(s3_bucket, "customer-42", "refund order 7?", prefix=prefix_b)
    _turn(s3_bucket, "legacy", "from before isolation")  # at the bucket root
    sfn = boto3.client("stepfunctions", endpoint_url=moto_server_url)
    machine = _machine(sfn)
    sfn.start_execution(  # B's job, parked on its task token (RUNNING without the engine)
        stateMachineArn=machine,
        name=owned_job_id(tag_b, "waiting"),
        input='{"session_id": "customer-42", "agent_id": "agent", "prompt": "x"}',
    )

    report = sweep_idle_sessions(
        boto3.client("s3"), s3_bucket, idle_days=1, now=NOW,
        live=lambda: live_sessions(sfn, machine),
    )  # fmt: skip

    assert report.sessions_seen == 3
    assert report.sessions_kept_live == [prefix_b + "customer-42"]
    assert sorted(report.sessions_deleted) == sorted([prefix_a + "customer-42", "legacy"])
    assert _keys(s3_bucket, prefix_a) == []
    assert _keys(s3_bucket, prefix_b + "session_customer-42/")


def test_the_sweeper_lambda_deletes_agent_versions_no_live_job_uses(
    s3_bucket: str, moto_server_url: str, monkeypatch: pytest.MonkeyPatch, no_asl_engine: None
) -> None:
    import io
    import zipfile

    from elsai.serverless.contract import service_keys

    monkeypatch.setenv("POWERTOOLS_METRICS_NAMESPACE", "elsai-test")
    for service in ("SFN", "LAMBDA", "IAM"):
        monkeypatch.setenv(f"AWS_ENDPOINT_URL_{service}", moto_server_url)
    from elsai_lambdas import sweeper

    def code(n: int) -> bytes:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("h.py", f"x = {n}")
        return buffer.getvalue()

    tag = uuid.uuid4().hex[:12]
    role = boto3.client("iam").create_role(RoleName=f"agent-{tag}", AssumeRolePolicyDocument="{}")
    lam = boto3.client("lambda")
    name = f"agent-{tag}"
    lam.create_function(FunctionName=name, Runtime="python3.12", Role=role["Role"]["Arn"],
                        Handler="h.x", Code={"ZipFile": code(0)})  # fmt: skip
    arns = []
    for n in range(5):  # five deploys, each with changed code
        lam.update_function_code(FunctionName=name, ZipFile=code(n + 1))
        arns.append(lam.publish_version(FunctionName=name)["FunctionArn"])
    versions = [a.rsplit(":", 1)[1] for a in arns]
    sfn = boto3.client("stepfunctions")
    machine = _machine(sfn)
    job = {"job_id": f"job-{tag}", "session_id": "s", "agent_function": arns[0]}
    sfn.start_execution(stateMachineArn=machine, name=job["job_id"], input=json.dumps(job))
    record = {"job_id": job["job_id"], "started_on": arns[0], "runs_on": arns[1]}  # upgraded
    boto3.client("s3").put_object(Bucket=s3_bucket, Key=service_keys.job_version_key(job["job_id"]),
                                  Body=json.dumps(record).encode())  # fmt: skip
    monkeypatch.setenv("ELSAI_SESSIONS_BUCKET", s3_bucket)
    monkeypatch.setenv("ELSAI_SESSION_IDLE_DAYS", "7")
    monkeypatch.setenv("ELSAI_STATE_MACHINE_ARN", machine)
    monkeypatch.setenv("ELSAI_AGENT_FUNCTION_NAME", name)
    monkeypatch.setenv("ELSAI_AGENT_VERSION_ARN", arns[3])  # current; arns[4] is the newest

    dry = sweeper.handler({"dry_run": True}, _Context())
    assert dry["versions"]["deleted"] == [versions[2]] and dry["versions"]["dry_run"]
    out = sweeper.handler({}, _Context())
    assert out["versions"] == {"current": versions[3], "live": versions[:2],
                               "deleted": [versions[2]], "dry_run": False}  # fmt: skip
    left = lam.list_versions_by_function(FunctionName=name)["Versions"]
    assert sorted(v["Version"] for v in left) == sorted(["$LATEST", *versions[:2], *versions[3:]])
