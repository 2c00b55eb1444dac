"""The local runtime's rename for moto's states:startExecution task: still needed, nestable, undone.

The rename wraps a private method of moto (the one such reach, in
``elsai.local.sfn_start_execution``). These tests fail loudly when moto changes under it: the
method's shape is checked, and a real startExecution task runs on moto's Step Functions engine
with and without the rename, so a moto release that maps the names itself shows up here.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from elsai.local.sfn_start_execution import (
    botocore_names_for_start_execution,
    current_normaliser,
    moto_normaliser,
)

REGION = "us-east-1"
ROLE = "arn:aws:iam::123456789012:role/sfn"


def test_moto_still_has_the_private_method_the_rename_wraps() -> None:
    moto_normaliser()  # raises MotoChangedError, naming the moto version, if it changed


def test_nested_holders_install_once_and_the_last_one_out_restores_moto() -> None:
    moto_own = current_normaliser()
    with botocore_names_for_start_execution():
        installed = current_normaliser()
        assert installed is not moto_own
        with botocore_names_for_start_execution():
            assert current_normaliser() is installed
        assert current_normaliser() is installed  # the outer holder still runs
    assert current_normaliser() is moto_own


@pytest.fixture
def sfn(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name, value in (("AWS_DEFAULT_REGION", REGION), ("AWS_ACCESS_KEY_ID", "testing"),
                        ("AWS_SECRET_ACCESS_KEY", "testing")):  # fmt: skip
        monkeypatch.setenv(name, value)
    config = {"stepfunctions": {"execute_state_machine": True}}
    with mock_aws(config=config):  # type: ignore[arg-type]
        yield boto3.client("stepfunctions", region_name=REGION)


def _continue_once(sfn: Any) -> tuple[str, list[dict[str, Any]]]:
    """Run a machine whose task starts another execution as a continuation does.

    Returns the parent's status and the executions the child machine got.
    """
    child = sfn.create_state_machine(
        name="child", roleArn=ROLE,
        definition=json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}),
    )["stateMachineArn"]  # fmt: skip
    start = {
        "Type": "Task",
        "Resource": "arn:aws:states:::states:startExecution",
        "Parameters": {"StateMachineArn": child, "Input": {"slice": 2}, "Name": "job-1-2"},
        "ResultPath": None,  # as the machine's HandOff state: its output is not kept
        "End": True,
    }
    parent = sfn.create_state_machine(
        name="parent", roleArn=ROLE,
        definition=json.dumps({"StartAt": "Continue", "States": {"Continue": start}}),
    )["stateMachineArn"]  # fmt: skip
    execution = sfn.start_execution(stateMachineArn=parent)["executionArn"]
    for _ in range(200):
        status = sfn.describe_execution(executionArn=execution)["status"]
        if status != "RUNNING":
            break
        time.sleep(0.05)
    return status, sfn.list_executions(stateMachineArn=child)["executions"]


def test_moto_still_needs_the_rename(sfn: Any) -> None:
    status, started = _continue_once(sfn)
    # If this fails, moto maps startExecution's ASL names itself now: delete the rename.
    assert (status, started) == ("FAILED", [])


def test_with_the_rename_the_continuation_starts_the_named_execution(sfn: Any) -> None:
    with botocore_names_for_start_execution():
        status, started = _continue_once(sfn)
    assert status == "SUCCEEDED"
    assert [e["name"] for e in started] == ["job-1-2"]
    described = sfn.describe_execution(executionArn=started[0]["executionArn"])
    assert json.loads(described["input"]) == {"slice": 2}
