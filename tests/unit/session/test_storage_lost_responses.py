"""Writes that survive lost responses: S3 applied the PUT, the answer never came back.

botocore retries such a PUT; the conditional retry meets the writer's own write (412). These
tests run real agents (ScriptedModel with tools, S3SessionManager, checkpoints at both
boundaries) against the moto server while `botocore_faults.LostResponses` loses responses at
botocore's `before-send` event, and check that no conflict is spurious, no message is lost or
duplicated, and a real second writer is still refused with nothing overwritten.
"""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint.config import CheckpointConfig
from elsai.conversation.null import NullConversationManager
from elsai.models import ScriptedModel
from elsai.session import S3SessionManager
from elsai.session.layout import keys
from elsai.session.storage import (
    S3Storage,
    SessionConflictError,
    StorageBackend,
    StorageError,
    StoredObject,
)
from elsai.session.storage.s3 import IN_FLIGHT_RETRIES
from tests.support.messages import uses_of
from tests.support.transcripts import assert_valid_transcript
from tests.unit.session.botocore_faults import PUT_EVENT, InFlight409, LostResponses

SESSION, AGENT = "lost-responses", "worker"
RUNS, TOOL_CYCLES = 9, 8


def _script(run: int) -> list[Any]:
    turns: list[Any] = [
        {
            "role": "assistant",
            "content": [
                {"text": f"step {run}.{j}"},
                {"toolUse": {"toolUseId": f"r{run}-t{j}", "name": "stamp", "input": {"n": j}}},
            ],
        }
        for j in range(TOOL_CYCLES)
    ]
    return [*turns, f"run {run} done"]


def _agent(bucket: str, run: int, faults: LostResponses | None, ledger: list[str]) -> Agent:
    """A fresh boto3 session per run, like a fresh Lambda container: its own client and
    retry quota. The fault hook is registered before the client exists, so it inherits it."""

    @tool
    def stamp(n: int) -> str:
        """Record that the tool ran.

        Args:
            n: The step number.
        """
        ledger.append(f"r{run}-{n}")
        return f"stamped {n}"

    session = boto3.Session()
    if faults is not None:
        session.events.register(PUT_EVENT, faults)
    config = AgentConfig(
        agent_id=AGENT,
        session_manager=S3SessionManager(SESSION, bucket, boto_session=session),
        checkpoint=CheckpointConfig(position="both"),
        conversation_manager=NullConversationManager(),  # the whole transcript in memory
    )
    return Agent(model=ScriptedModel(_script(run)), tools=[stamp], config=config)


def _stored_messages(bucket: str) -> list[dict[str, Any]]:
    s3 = boto3.client("s3")
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=keys.messages_prefix(SESSION, AGENT))
    names = [o["Key"] for o in listed.get("Contents", [])]
    indices = sorted(i for i in map(keys.message_index, names) if i is not None)
    assert indices == list(range(len(names))), f"gaps or strays in {names}"
    records = []
    for i in indices:
        body = s3.get_object(Bucket=bucket, Key=keys.message_key(SESSION, AGENT, i))["Body"]
        record = json.loads(body.read())
        assert record["message_id"] == i
        records.append(record["message"])
    return records


def test_lost_responses_during_agent_runs_cause_no_conflict_and_lose_nothing(
    s3_bucket: str,
) -> None:
    ledger: list[str] = []
    faults = [LostResponses(seed=run) for run in range(RUNS)]
    for run in range(RUNS):
        result = _agent(s3_bucket, run, faults[run], ledger)(f"run {run}")
        assert str(result) == f"run {run} done"

    applied_creates = sum(f.applied_and_lost("create") for f in faults)
    applied_replaces = sum(f.applied_and_lost("replace") for f in faults)
    assert applied_creates + applied_replaces >= 200, (applied_creates, applied_replaces)
    assert applied_creates >= 50 and applied_replaces >= 50
    # Most lost creates/replaces were retried into a 412 for the writer's own write.
    assert sum(f.counts["create_applied_then_lost_200"] for f in faults) > 0

    messages = _stored_messages(s3_bucket)
    assert len(messages) == RUNS * (2 + 2 * TOOL_CYCLES)
    assert_valid_transcript(messages)  # type: ignore[arg-type]
    use_ids = [u["toolUseId"] for m in messages for u in uses_of(m)]  # type: ignore[arg-type]
    assert use_ids == [f"r{r}-t{j}" for r in range(RUNS) for j in range(TOOL_CYCLES)]
    assert ledger == [f"r{r}-{j}" for r in range(RUNS) for j in range(TOOL_CYCLES)]
    # A rebuilt agent sees the same conversation, and its bookmark says the turn ended.
    rebuilt = _agent(s3_bucket, RUNS, None, ledger)
    assert rebuilt.messages == messages
    checkpoint = json.loads(
        boto3.client("s3")
        .get_object(Bucket=s3_bucket, Key=keys.checkpoint_key(SESSION, AGENT))["Body"]
        .read()
    )
    assert checkpoint["execution_status"] == "completed"


def test_a_real_second_writer_is_refused_even_when_its_answers_are_lost(s3_bucket: str) -> None:
    key, bookmark = keys.message_key(SESSION, AGENT, 0), keys.checkpoint_key(SESSION, AGENT)
    first = S3Storage(s3_bucket)
    m_version = first.create(key, b"first writer's message")
    b_version = first.replace(bookmark, b"first writer's bookmark", expected_version=None)
    b_version = first.replace(bookmark, b"bookmark v2", expected_version=b_version)

    # Every answer the second writer gets is lost once: its retry meets 412 again, and the
    # read-back finds someone else's bytes.
    faults = LostResponses(seed=1, rate=1.0, applied_share=1.0, max_in_a_row=1)
    session = boto3.Session()
    session.events.register(PUT_EVENT, faults)
    second = S3Storage(s3_bucket, boto_session=session)
    with pytest.raises(SessionConflictError, match="another writer created it first"):
        second.create(key, b"second writer's message")
    with pytest.raises(SessionConflictError, match="changed since it was read"):
        second.replace(bookmark, b"second writer's bookmark", expected_version=m_version)
    with pytest.raises(SessionConflictError):
        second.replace(bookmark, b"second writer's bookmark", expected_version=None)
    assert faults.counts["create_applied_then_lost_412"] >= 2
    assert faults.counts["replace_applied_then_lost_412"] == 1
    assert first.read(key) == StoredObject(b"first writer's message", m_version)
    assert first.read(bookmark) == StoredObject(b"bookmark v2", b_version)


def test_a_stale_replace_whose_bytes_differ_is_a_conflict_after_a_lost_answer(
    s3_bucket: str,
) -> None:
    """The writer's own replace landed (v2); a *later* stale retry with other bytes is not."""
    bookmark = keys.checkpoint_key(SESSION, AGENT)
    faults = LostResponses(seed=2, rate=1.0, applied_share=1.0, max_in_a_row=1)
    session = boto3.Session()
    session.events.register(PUT_EVENT, faults)
    writer = S3Storage(s3_bucket, boto_session=session)
    v1 = writer.create(bookmark, b"v1")
    v2 = writer.replace(bookmark, b"v2", expected_version=v1)  # lost once, then 412 → own
    assert writer.read(bookmark) == StoredObject(b"v2", v2)
    with pytest.raises(SessionConflictError):
        writer.replace(bookmark, b"v2 but edited", expected_version=v1)
    assert writer.read(bookmark) == StoredObject(b"v2", v2)


def _in_flight_storage(s3_bucket: str, hook: InFlight409) -> tuple[S3Storage, list[float]]:
    session = boto3.Session()
    session.events.register(PUT_EVENT, hook)
    storage = S3Storage(s3_bucket, boto_session=session)
    waits: list[float] = []
    storage._sleep = waits.append  # record the backoff instead of sleeping
    return storage, waits


def test_409_in_flight_is_retried_with_backoff_then_succeeds(s3_bucket: str) -> None:
    storage, waits = _in_flight_storage(s3_bucket, InFlight409(times=3))
    key = keys.message_key(SESSION, AGENT, 0)
    version = storage.create(key, b"after 409s")
    assert storage.read(key) == StoredObject(b"after 409s", version)
    assert len(waits) == 3 and all(0 <= w <= 0.05 * 2**i for i, w in enumerate(waits))


def test_409_for_the_writers_own_in_flight_write_ends_in_success(s3_bucket: str) -> None:
    """Lost response, then botocore's retry meets 409 (the first attempt still "in flight");
    the next try gets 412 and finds this writer's own bytes."""
    storage, waits = _in_flight_storage(s3_bucket, InFlight409(times=1, lost_first=True))
    key = keys.checkpoint_key(SESSION, AGENT)
    version = storage.replace(key, b"mine", expected_version=None)
    assert storage.read(key) == StoredObject(b"mine", version)
    assert len(waits) == 1


def test_409_that_never_clears_is_a_retryable_storage_error_and_writes_nothing(
    s3_bucket: str,
) -> None:
    storage, waits = _in_flight_storage(s3_bucket, InFlight409(times=10_000))
    key = keys.message_key(SESSION, AGENT, 0)
    with pytest.raises(StorageError, match="in flight") as caught:
        storage.create(key, b"never")
    assert not isinstance(caught.value, SessionConflictError)
    assert len(waits) == IN_FLIGHT_RETRIES
    assert storage.read(key) is None


def test_a_write_that_landed_is_recognized_when_botocore_gives_up(s3_bucket: str) -> None:
    """Every attempt applied and every answer lost: botocore raises, the read-back finds it."""
    faults = LostResponses(seed=3, rate=1.0, applied_share=1.0, max_in_a_row=99)
    session = boto3.Session()
    session.events.register(PUT_EVENT, faults)
    storage = S3Storage(s3_bucket, boto_session=session)
    key = keys.message_key(SESSION, AGENT, 0)
    version = storage.create(key, b"landed")
    assert faults.applied_and_lost("create") == 3  # botocore's standard mode: 3 attempts
    assert S3Storage(s3_bucket).read(key) == StoredObject(b"landed", version)


def test_a_write_that_never_left_is_a_storage_error_when_botocore_gives_up(
    s3_bucket: str,
) -> None:
    faults = LostResponses(seed=4, rate=1.0, applied_share=0.0, max_in_a_row=99)
    session = boto3.Session()
    session.events.register(PUT_EVENT, faults)
    storage = S3Storage(s3_bucket, boto_session=session)
    key = keys.message_key(SESSION, AGENT, 0)
    with pytest.raises(StorageError, match="ConnectionClosedError") as caught:
        storage.create(key, b"never sent")
    assert not isinstance(caught.value, SessionConflictError)
    assert faults.counts["create_dropped_before_sending"] == 3
    assert S3Storage(s3_bucket).read(key) is None


def test_an_identical_write_sent_once_is_still_a_conflict(storage: StorageBackend) -> None:
    """No attempt of the second writer can have landed, so equal bytes are no excuse: a stalled
    writer repeating its successor's write is refused at once (both backends)."""
    key, bookmark = keys.message_key(SESSION, AGENT, 0), keys.checkpoint_key(SESSION, AGENT)
    version = storage.create(key, b"same")
    with pytest.raises(SessionConflictError):
        storage.create(key, b"same")
    v1 = storage.create(bookmark, b"v1")
    v2 = storage.replace(bookmark, b"v2", expected_version=v1)
    with pytest.raises(SessionConflictError):
        storage.replace(bookmark, b"v2", expected_version=v1)
    assert storage.read(key) == StoredObject(b"same", version)
    assert storage.read(bookmark) == StoredObject(b"v2", v2)
