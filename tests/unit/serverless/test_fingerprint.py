"""The build fingerprint: what differs, in words; a pinned mismatch refuses, an upgrade records."""

from __future__ import annotations

from pathlib import Path

import pytest

from elsai import Agent, tool
from elsai.models import ScriptedModel
from elsai.serverless.contract import NON_RETRYABLE_ERRORS, service_keys
from elsai.serverless.errors import BuildMismatchError
from elsai.serverless.fingerprint import (
    BuildFingerprint,
    check_build,
    differences,
    fingerprint_of,
)
from elsai.session.storage.file import FileStorage

V1 = "arn:aws:lambda:us-east-1:123456789012:function:agent:1"
V2 = "arn:aws:lambda:us-east-1:123456789012:function:agent:2"


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up.

    Args:
        order_id: The order.
    """
    return order_id


@tool(name="lookup_order")
def lookup_order_v2(order_id: int) -> str:
    """Look an order up.

    Args:
        order_id: The order, now a number.
    """
    return str(order_id)


@tool
def refund(order_id: str) -> str:
    """Refund an order.

    Args:
        order_id: The order.
    """
    return order_id


def _fingerprint(tools: list[object], prompt: str, arn: str = V1) -> BuildFingerprint:
    agent = Agent(model=ScriptedModel(["hi"]), tools=tools, system_prompt=prompt)
    return fingerprint_of(agent, arn)


def test_differences_name_what_changed() -> None:
    old = _fingerprint([lookup_order, refund], "be brief")
    new = _fingerprint([lookup_order_v2], "be brief", V2)
    assert differences(old, new) == [
        "tool `refund` removed",
        "tool `lookup_order` input schema changed",
    ]
    assert differences(old, old.model_copy(update={"model_id": "other"})) == [
        f"model id {old.model_id} -> other"
    ]
    assert differences(old, _fingerprint([lookup_order, refund], "be long")) == [
        "system prompt changed"
    ]
    assert old.code_version == "1" and "be brief" not in old.model_dump_json()  # a digest only


def test_same_version_different_agent_is_refused_and_never_retried(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path)
    assert check_build(storage, "job-1", _fingerprint([refund], "p")) == []
    assert check_build(storage, "job-1", _fingerprint([refund], "p")) == []
    with pytest.raises(BuildMismatchError, match="tool `refund` removed"):
        check_build(storage, "job-1", _fingerprint([], "p"))
    assert "BuildMismatchError" in NON_RETRYABLE_ERRORS


def test_another_version_records_the_changes_and_goes_on(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path)
    check_build(storage, "job-1", _fingerprint([refund], "p"))
    changes = check_build(storage, "job-1", _fingerprint([], "p", V2))
    assert changes == ["tool `refund` removed"]
    assert check_build(storage, "job-1", _fingerprint([], "p", V2)) == []  # now its baseline


def test_a_corrupt_record_is_replaced_not_trusted(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path)
    storage.replace(service_keys.job_fingerprint_key("job-1"), b"{not json", expected_version=None)
    assert check_build(storage, "job-1", _fingerprint([refund], "p")) == []
    with pytest.raises(BuildMismatchError):
        check_build(storage, "job-1", _fingerprint([], "p"))
