"""The parked task-token record: one model, written by the park step, read by the jobs API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from elsai.serverless import ParkedTaskToken, park_task_token, read_parked_token
from elsai.serverless.contract import service_keys
from elsai.session import FileSessionManager

INTERRUPTS = [{"id": "i1", "name": "approve", "reason": {"amount": 40}, "tool_use_id": "t1"}]


@pytest.fixture
def manager(tmp_path: Path) -> FileSessionManager:
    return FileSessionManager(session_id="s1", storage_dir=str(tmp_path), fsync=False)


def test_what_the_writer_parks_the_reader_gets_back(manager: FileSessionManager) -> None:
    written = park_task_token(manager, "job-1", "token-1", INTERRUPTS)
    read = read_parked_token(manager.storage, "job-1")
    assert read == written
    assert (read.job_id, read.task_token, read.interrupts) == ("job-1", "token-1", INTERRUPTS)
    assert read.pending_ids() == {"i1"}
    assert read.parked_at > 0
    # The one key layout: where the state machine's readers (tests, the API) look for it.
    stored = manager.storage.read(service_keys.job_token_key("job-1"))
    assert stored is not None and json.loads(stored.data)["task_token"] == "token-1"


def test_a_later_wait_replaces_the_record_and_null_interrupts_are_none(
    manager: FileSessionManager,
) -> None:
    park_task_token(manager, "job-1", "token-1", INTERRUPTS)
    park_task_token(manager, "job-1", "token-2", None)
    read = read_parked_token(manager.storage, "job-1")
    assert read is not None
    assert (read.task_token, read.interrupts, read.pending_ids()) == ("token-2", [], set())


def test_nothing_parked_or_no_token_reads_as_none(manager: FileSessionManager) -> None:
    assert read_parked_token(manager.storage, "job-1") is None
    key = service_keys.job_token_key("job-2")
    manager.storage.replace(key, b'{"job_id": "job-2", "task_token": ""}', expected_version=None)
    assert read_parked_token(manager.storage, "job-2") is None


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"not json", "is not JSON"),
        (b'{"job_id": "job-3", "task_token": "t", "interrupts": "nope"}', "is invalid"),
        (b'["task_token"]', "is invalid"),
    ],
)
def test_a_corrupt_record_is_a_clear_error_naming_its_key(
    manager: FileSessionManager, data: bytes, problem: str
) -> None:
    key = service_keys.job_token_key("job-3")
    manager.storage.replace(key, data, expected_version=None)
    with pytest.raises(ValueError, match=problem) as raised:
        read_parked_token(manager.storage, "job-3")
    assert "task_token.json" in str(raised.value)


def test_bad_job_ids_and_bad_records_are_refused_before_any_write(
    manager: FileSessionManager,
) -> None:
    with pytest.raises(ValueError, match="job_id"):
        park_task_token(manager, "../escape", "token", [])
    with pytest.raises(ValueError):
        park_task_token(manager, "job-4", "", [])
    with pytest.raises(ValueError):
        park_task_token(manager, "job-4", "token", "not a list")
    assert manager.storage.list("jobs/") == []
    with pytest.raises(ValueError, match="job_id"):
        read_parked_token(manager.storage, "a/b")


def test_the_record_model_ignores_fields_it_does_not_know() -> None:
    record = ParkedTaskToken.model_validate(
        {"job_id": "j", "task_token": "t", "parked_at": 1.0, "future_field": True}
    )
    assert record.model_dump() == {
        "job_id": "j",
        "task_token": "t",
        "interrupts": [],
        "parked_at": 1.0,
    }
