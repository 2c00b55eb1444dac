"""`elsai sessions --s3`: the same commands over a bucket, served by a moto server on loopback.

The agent writes with S3SessionManager and the command reads in a subprocess; both find the
server through `AWS_ENDPOINT_URL_S3` with dummy credentials, as a user's configuration would.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from elsai.session import S3SessionManager
from tests.unit.cli.helpers import agent, cli_env, elsai, finish, run_clean, run_crashed, start_tail


@pytest.fixture
def aws(moto_server_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Environment for this process and the command: dummy credentials, no user config."""
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL_S3": moto_server_url,
        "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
        "NO_PROXY": "127.0.0.1,localhost",
    }
    for var in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(var, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return cli_env(env)


@pytest.fixture
def bucket(aws: dict[str, str]) -> str:
    import boto3

    name = f"elsai-cli-{uuid.uuid4().hex[:16]}"
    boto3.client("s3").create_bucket(Bucket=name)
    return name


def s3_manager(bucket: str, session_id: str) -> S3SessionManager:
    return S3SessionManager(session_id=session_id, bucket=bucket, prefix="jobs/prod")


def test_ls_show_check_over_s3(bucket: str, aws: dict[str, str]) -> None:
    run_clean(None, "clean", manager=s3_manager(bucket, "clean"))
    run_crashed(None, "crashed", manager=s3_manager(bucket, "crashed"))
    url = f"s3://{bucket}/jobs/prod"

    ls = elsai("sessions", "ls", "--s3", url, env=aws)
    assert ls.returncode == 0, ls.stderr
    rows = {line.split()[0]: line.split() for line in ls.stdout.splitlines()[1:]}
    assert rows["clean"][1:4] == ["worker", "6", "after_tools#1"]
    assert rows["crashed"][1:4] == ["worker", "2", "after_model#0"]
    listed = json.loads(elsai("sessions", "ls", "--s3", url, "--json", env=aws).stdout)
    assert all(entry["updated_at"].endswith("Z") for entry in listed)  # from S3 LastModified

    show = elsai("sessions", "show", "crashed", "--s3", url, env=aws)
    assert show.returncode == 0, show.stderr
    assert f"session crashed · {url}" in show.stdout
    assert '→ get_weather({"city": "Atlantis"})  id=t1' in show.stdout
    assert "resume after_model: 1 pending tool (get_weather) runs first" in show.stdout

    for session in ("clean", "crashed"):
        check = elsai("sessions", "check", session, "--s3", url, env=aws)
        assert check.returncode == 0 and check.stdout.startswith(f"ok  session {session}"), (
            check.stdout
        )


def test_check_names_the_s3_object_and_missing_sessions_exit_2(
    bucket: str, aws: dict[str, str]
) -> None:
    import boto3

    run_crashed(None, "crashed", manager=s3_manager(bucket, "crashed"))
    key = "jobs/prod/session_crashed/agents/agent_worker/checkpoint.json"
    boto3.client("s3").put_object(Bucket=bucket, Key=key, Body=b"{broken")
    url = f"s3://{bucket}/jobs/prod"
    check = elsai("sessions", "check", "crashed", "--s3", url, env=aws)
    assert check.returncode == 1
    assert f"error   s3://{bucket}/{key}\n        corrupt JSON: " in check.stdout
    missing = elsai("sessions", "show", "ghost", "--s3", url, env=aws)
    assert missing.returncode == 2 and missing.stderr == f"elsai: no session ghost in {url}\n"
    no_bucket = elsai("sessions", "ls", "--s3", "s3://no-such-bucket-elsai/x", env=aws)
    assert no_bucket.returncode == 1 and len(no_bucket.stderr.splitlines()) == 1
    assert no_bucket.stderr.startswith("elsai: error: cannot list s3://no-such-bucket-elsai/x/")


def test_tail_over_s3(bucket: str, aws: dict[str, str]) -> None:
    run_clean(None, "live", manager=s3_manager(bucket, "live"))
    url = f"s3://{bucket}/jobs/prod"
    proc = start_tail("live", "--s3", url, "--last", "0", "--timeout", "30", "--until-complete")
    agent(None, "live", ["Still sunny."], manager=s3_manager(bucket, "live"))("Anything else?")
    code, out, err = finish(proc)
    assert code == 0, err
    assert "worker … 6 earlier message(s)" in out
    assert "worker [6] user" in out and "Anything else?" in out and "Still sunny." in out
    assert "message_count 8 · completed" in out
