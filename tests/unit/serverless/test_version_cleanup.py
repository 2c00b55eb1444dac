"""Version cleanup against moto's Lambda and Step Functions APIs: only unused old versions go."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from elsai.serverless.contract import service_keys
from elsai.serverless.version_cleanup import clean_versions, live_versions, published_versions

FN = "agent"


def _zip(text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("handler.py", text)
    return buffer.getvalue()


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    # Executions only need to exist and stay RUNNING: without the execute engine a stop is
    # never racing an engine thread that has not started (moto's config is process-wide).
    with mock_aws(config={"stepfunctions": {"execute_state_machine": False}}):
        iam = boto3.client("iam")
        role = iam.create_role(RoleName="r", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        lam = boto3.client("lambda")
        lam.create_function(FunctionName=FN, Runtime="python3.12", Role=role,
                            Handler="handler.h", Code={"ZipFile": _zip("v = 0")})  # fmt: skip
        arns = {}
        for n in range(1, 6):  # five deploys: versions 1..5
            lam.update_function_code(FunctionName=FN, ZipFile=_zip(f"v = {n}"))
            arns[str(n)] = lam.publish_version(FunctionName=FN)["FunctionArn"]
        sfn = boto3.client("stepfunctions")
        machine = sfn.create_state_machine(
            name="jobs", roleArn=role,
            definition=json.dumps({"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": True}}}),
        )["stateMachineArn"]  # fmt: skip
        yield {"lambda": lam, "sfn": sfn, "machine": machine, "arns": arns}


def _start(aws: dict[str, Any], job_id: str, version: str) -> str:
    job = {"job_id": job_id, "session_id": job_id, "agent_function": aws["arns"][version]}
    return aws["sfn"].start_execution(
        stateMachineArn=aws["machine"], name=job_id, input=json.dumps(job)
    )["executionArn"]


def _records(records: dict[str, bytes]) -> Any:
    return lambda key: records.get(key)


def test_only_versions_no_live_job_uses_are_deleted_never_the_current_or_newest(
    aws: dict[str, Any],
) -> None:
    _start(aws, "job-a", "1")  # running on v1
    _start(aws, "job-b", "2")  # on v2, its record says it was upgraded to v3
    upgraded = {"job_id": "job-b", "started_on": aws["arns"]["2"], "runs_on": aws["arns"]["3"]}
    records = {service_keys.job_version_key("job-b"): json.dumps(upgraded).encode()}
    stopped = _start(aws, "job-c", "4")
    aws["sfn"].stop_execution(executionArn=stopped)  # a finished job keeps nothing

    live = live_versions(aws["sfn"], aws["machine"], _records(records))
    assert live == {"1", "2", "3"}
    report = clean_versions(aws["lambda"], FN, current="4", live=live)
    assert report.deleted == [] and report.live == ["1", "2", "3"]  # 4 current, 5 newest

    report = clean_versions(aws["lambda"], FN, current="5", live={"1", "3"})
    assert report.deleted == ["2", "4"]
    assert published_versions(aws["lambda"], FN) == ["1", "3", "5"]
    aws["lambda"].get_function(FunctionName=FN)  # the function itself stays


def test_a_dry_run_deletes_nothing_and_a_corrupt_record_keeps_nothing_more(
    aws: dict[str, Any],
) -> None:
    _start(aws, "job-a", "2")
    records = {service_keys.job_version_key("job-a"): b"{not json"}
    live = live_versions(aws["sfn"], aws["machine"], _records(records))
    assert live == {"2"}  # the execution input still protects its version
    report = clean_versions(aws["lambda"], FN, current="5", live=live, dry_run=True)
    assert report.deleted == ["1", "3", "4"] and report.dry_run
    assert published_versions(aws["lambda"], FN) == ["1", "2", "3", "4", "5"]


def test_a_current_version_that_is_not_a_number_is_refused(aws: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="must be a number"):
        clean_versions(aws["lambda"], FN, current="$LATEST", live=set())
    assert published_versions(aws["lambda"], FN) == ["1", "2", "3", "4", "5"]
