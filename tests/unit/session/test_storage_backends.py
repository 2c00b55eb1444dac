"""The storage contract, checked against both backends, plus each backend's own promises.

The `storage` fixture (tests/unit/session/conftest.py) runs contract tests on FileStorage in a temp
directory and on S3Storage against a moto server reached through `AWS_ENDPOINT_URL_S3`.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from elsai.session.layout import keys
from elsai.session.storage import (
    FileStorage,
    S3Storage,
    SessionConflictError,
    StorageBackend,
    StorageError,
    StoredObject,
)

MSG0 = keys.message_key("s1", "a1", 0)
BOOKMARK = keys.agent_key("s1", "a1")


# -- contract (both backends) -----------------------------------------------------------------


def test_read_missing_is_none(storage: StorageBackend) -> None:
    assert storage.read(MSG0) is None


def test_create_then_read_back(storage: StorageBackend) -> None:
    version = storage.create(MSG0, b'{"role": "user"}')
    assert storage.read(MSG0) == StoredObject(data=b'{"role": "user"}', version=version)


def test_empty_object_round_trips(storage: StorageBackend) -> None:
    version = storage.create(MSG0, b"")
    assert storage.read(MSG0) == StoredObject(data=b"", version=version)


def test_create_twice_conflicts_and_keeps_original(storage: StorageBackend) -> None:
    version = storage.create(MSG0, b"first")
    with pytest.raises(SessionConflictError, match="already exists"):
        storage.create(MSG0, b"second")
    assert storage.read(MSG0) == StoredObject(b"first", version)


def test_replace_with_current_version(storage: StorageBackend) -> None:
    v1 = storage.create(BOOKMARK, b"v1")
    v2 = storage.replace(BOOKMARK, b"v2", expected_version=v1)
    assert v2 != v1
    assert storage.read(BOOKMARK) == StoredObject(b"v2", v2)
    v3 = storage.replace(BOOKMARK, b"v3", expected_version=v2)
    assert storage.read(BOOKMARK) == StoredObject(b"v3", v3)


def test_replace_with_stale_version_conflicts(storage: StorageBackend) -> None:
    v1 = storage.create(BOOKMARK, b"v1")
    v2 = storage.replace(BOOKMARK, b"v2", expected_version=v1)
    with pytest.raises(SessionConflictError):
        storage.replace(BOOKMARK, b"late writer", expected_version=v1)
    assert storage.read(BOOKMARK) == StoredObject(b"v2", v2)


def test_a_conflict_says_what_happened_and_what_to_do(storage: StorageBackend) -> None:
    v1 = storage.create(BOOKMARK, b"v1")
    storage.replace(BOOKMARK, b"v2", expected_version=v1)
    for attempt in (
        lambda: storage.create(BOOKMARK, b"again"),
        lambda: storage.replace(BOOKMARK, b"late", expected_version=v1),
    ):
        with pytest.raises(SessionConflictError) as caught:
            attempt()
        text = str(caught.value)
        assert "another writer" in text and "nothing was overwritten" in text
        assert "rebuild the agent with the same session_id and agent_id" in text


def test_replace_expecting_absence_on_existing_key_conflicts(storage: StorageBackend) -> None:
    v1 = storage.create(BOOKMARK, b"v1")
    with pytest.raises(SessionConflictError):
        storage.replace(BOOKMARK, b"other", expected_version=None)
    assert storage.read(BOOKMARK) == StoredObject(b"v1", v1)


def test_replace_expecting_absence_on_missing_key_creates(storage: StorageBackend) -> None:
    version = storage.replace(BOOKMARK, b"new", expected_version=None)
    assert storage.read(BOOKMARK) == StoredObject(b"new", version)


def test_replace_expecting_a_version_on_missing_key_conflicts(storage: StorageBackend) -> None:
    # A version this backend really issued, just for another key.
    v1 = storage.create(keys.agent_key("s1", "other"), b"x")
    with pytest.raises(SessionConflictError):
        storage.replace(BOOKMARK, b"y", expected_version=v1)
    assert storage.read(BOOKMARK) is None


def test_list_returns_exactly_the_created_keys(storage: StorageBackend) -> None:
    created = [
        keys.session_key("a"),
        keys.agent_key("a", "x"),
        keys.checkpoint_key("a", "x"),
        *(keys.message_key("a", "x", i) for i in range(3)),
        keys.message_key("a", "y", 0),
        keys.session_key("ab"),
        keys.multi_agent_key("b"),
    ]
    for key in created:
        storage.create(key, key.encode())
    # Replacing leaves lock files behind on disk; they must stay invisible.
    v = storage.read(keys.agent_key("a", "x"))
    assert v is not None
    storage.replace(keys.agent_key("a", "x"), b"again", expected_version=v.version)

    assert sorted(storage.list("")) == sorted(created)
    assert sorted(storage.list(keys.session_dir("a"))) == sorted(created[:7])
    assert sorted(storage.list(keys.messages_prefix("a", "x"))) == [
        keys.message_key("a", "x", i) for i in range(3)
    ]
    # A prefix that ends mid-name behaves as a string prefix, as on S3.
    assert sorted(storage.list("session_a")) == sorted(created[:8])
    assert sorted(storage.list("session_a/agents/agent_")) == sorted(created[1:7])
    assert storage.list(keys.session_dir("missing")) == []
    assert storage.list(keys.session_key("b")) == []  # a key that is not there


def test_read_many_keeps_the_order_of_keys(storage: StorageBackend) -> None:
    names = [keys.message_key("s1", "a1", i) for i in range(20)]
    versions = {k: storage.create(k, k.encode()) for k in names[::2]}  # every other one
    wanted = list(reversed(names))
    result = storage.read_many(wanted)
    assert len(result) == len(wanted)
    for key, obj in zip(wanted, result, strict=True):
        if key in versions:
            assert obj == StoredObject(key.encode(), versions[key])
        else:
            assert obj is None
    assert storage.read_many([]) == []


def _race(writers: int, attempt: Callable[[bytes], str]) -> tuple[list[tuple[bytes, str]], int]:
    """Start `writers` threads at once, each calling `attempt(own payload)`.

    Returns the (payload, version) of every winner and the number of SessionConflictErrors;
    any other exception fails the test.
    """
    barrier = threading.Barrier(writers)
    wins: list[tuple[bytes, str]] = []
    conflicts: list[SessionConflictError] = []
    errors: list[BaseException] = []

    def write(i: int) -> None:
        payload = f"writer-{i}".encode()
        barrier.wait()
        try:
            wins.append((payload, attempt(payload)))
        except SessionConflictError as exc:
            conflicts.append(exc)
        except BaseException as exc:  # surfaced below instead of dying with the thread
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    return wins, len(conflicts)


def test_racing_replace_has_exactly_one_winner(storage: StorageBackend) -> None:
    for round_ in range(3):
        key = keys.agent_key("race", f"r{round_}")
        start = storage.create(key, b"start")
        wins, conflicts = _race(16, functools.partial(storage.replace, key, expected_version=start))
        assert len(wins) == 1, wins
        assert conflicts == 15
        payload, version = wins[0]
        assert storage.read(key) == StoredObject(payload, version)


def test_racing_create_has_exactly_one_winner(storage: StorageBackend) -> None:
    wins, conflicts = _race(16, functools.partial(storage.create, MSG0))
    assert len(wins) == 1, wins
    assert conflicts == 15
    payload, version = wins[0]
    assert storage.read(MSG0) == StoredObject(payload, version)


# -- FileStorage --------------------------------------------------------------------------------


def test_file_layout_and_describe(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path / "root")
    storage.create(MSG0, b"hello")
    expected = tmp_path / "root" / "session_s1" / "agents" / "agent_a1" / "messages"
    assert (expected / "message_0.json").read_bytes() == b"hello"
    assert storage.describe(MSG0) == str(expected / "message_0.json")
    # Another instance (another process, after a restart) sees the same object and version.
    assert FileStorage(str(tmp_path / "root")).read(MSG0) == storage.read(MSG0)


@pytest.mark.parametrize(
    "bad", ["/etc/passwd", "../escape", "a/../../escape", "a/./b", "a//b", "a\\b", ".hidden", ""]
)
def test_file_refuses_keys_that_could_escape(tmp_path: Path, bad: str) -> None:
    storage = FileStorage(tmp_path)
    with pytest.raises(ValueError):
        storage.create(bad, b"x")
    with pytest.raises(ValueError):
        storage.read(bad)
    if bad:  # "" is a valid list prefix (everything)
        with pytest.raises(ValueError):
            storage.list(bad)


def test_file_hides_temp_and_lock_files_and_cleans_up(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path)
    v1 = storage.create(BOOKMARK, b"v1")
    with pytest.raises(SessionConflictError):
        storage.create(BOOKMARK, b"dup")
    with pytest.raises(SessionConflictError):
        storage.replace(BOOKMARK, b"stale", expected_version="0" * 32)
    storage.replace(BOOKMARK, b"v2", expected_version=v1)
    directory = Path(storage.describe(BOOKMARK)).parent
    # No temp file survives a write, whether it won or lost; only the object and its lock.
    assert sorted(os.listdir(directory)) == [".agent.json.lock", "agent.json"]
    # A temp file left by a crashed writer is invisible.
    (directory / ".checkpoint.json.deadbeef.tmp").write_bytes(b"partial")
    assert storage.list("") == [BOOKMARK]
    assert storage.read(keys.checkpoint_key("s1", "a1")) is None


def test_file_errors_name_the_path(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path)
    storage.create("session_s1/agents", b"a file where a directory belongs")
    with pytest.raises(StorageError, match=str(tmp_path / "session_s1" / "agents")):
        storage.create(MSG0, b"x")
    assert storage.read(MSG0) is None  # a path through a file holds nothing


def test_file_read_of_a_directory_is_a_storage_error_naming_it(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path)
    storage.create(MSG0, b"x")
    with pytest.raises(StorageError, match="cannot read .*session_s1/agents"):
        storage.read("session_s1/agents")


def test_file_read_returns_every_byte_of_a_large_object(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path)
    data = os.urandom(3 * 65536 + 17)  # several read calls' worth
    version = storage.create(MSG0, data)
    assert storage.read(MSG0) == StoredObject(data=data, version=version)


def _race_create_worker(
    root: str, names: list[str], payload: bytes, barrier: Any, results: Any
) -> None:
    """Runs in a spawned process: create each key in lockstep with the other process."""
    storage = FileStorage(root)
    won = []
    for key in names:
        barrier.wait()
        try:
            storage.create(key, payload)
            won.append(key)
        except SessionConflictError:
            pass
    results.put((payload, won))


def test_file_two_processes_racing_create_have_one_winner(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    names = [keys.message_key("proc", "a", i) for i in range(25)]
    barrier = ctx.Barrier(2)
    results = ctx.Queue()
    procs = [
        ctx.Process(
            target=_race_create_worker,
            args=(str(tmp_path), names, f"process-{i}".encode(), barrier, results),
        )
        for i in range(2)
    ]
    for p in procs:
        p.start()
    outcome = dict(results.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    storage = FileStorage(tmp_path)
    for key in names:
        winners = [payload for payload, won in outcome.items() if key in won]
        assert len(winners) == 1, (key, winners)
        stored = storage.read(key)
        assert stored is not None and stored.data == winners[0]


# -- S3Storage ----------------------------------------------------------------------------------


def test_s3_client_honours_endpoint_env_and_sets_config(s3_bucket: str, s3_endpoint: str) -> None:
    storage = S3Storage(s3_bucket)
    client = storage._client
    assert client.meta.endpoint_url == s3_endpoint  # found via AWS_ENDPOINT_URL_S3 alone
    config: Any = client.meta.config  # botocore's stubs do not declare these attributes
    assert "elsai" in (config.user_agent_extra or "")
    assert config.retries["mode"] == "standard"
    storage.create(MSG0, b"via env endpoint")
    assert storage.read(MSG0) is not None


@pytest.mark.parametrize("prefix", ["tenant/a", "tenant/a/", "/tenant/a"])
def test_s3_prefix(s3_bucket: str, prefix: str) -> None:
    import boto3

    storage = S3Storage(s3_bucket, prefix=prefix)
    assert storage.prefix == "tenant/a/"
    m_version = storage.create(MSG0, b"m")
    storage.create(BOOKMARK, b"b")
    raw = boto3.client("s3").list_objects_v2(Bucket=s3_bucket)
    assert sorted(o["Key"] for o in raw["Contents"]) == sorted(
        ["tenant/a/" + MSG0, "tenant/a/" + BOOKMARK]
    )
    assert sorted(storage.list("")) == sorted([MSG0, BOOKMARK])
    assert storage.list(keys.messages_prefix("s1", "a1")) == [MSG0]
    assert storage.describe(MSG0) == f"s3://{s3_bucket}/tenant/a/{MSG0}"
    # Another prefix in the same bucket is a separate store.
    other = S3Storage(s3_bucket, prefix="tenant/b")
    assert other.list("") == [] and other.read(MSG0) is None
    other.create(MSG0, b"independent")
    assert storage.read(MSG0) == StoredObject(b"m", m_version)


def test_s3_describe_and_conflict_messages_name_the_url(s3_bucket: str) -> None:
    storage = S3Storage(s3_bucket)
    url = f"s3://{s3_bucket}/{MSG0}"
    assert storage.describe(MSG0) == url
    version = storage.create(MSG0, b"x")
    with pytest.raises(SessionConflictError, match=url):
        storage.create(MSG0, b"y")
    with pytest.raises(SessionConflictError, match="PreconditionFailed"):
        storage.replace(MSG0, b"y", expected_version='"0000"')
    assert storage.read(MSG0) == StoredObject(b"x", version)


def test_s3_other_errors_are_storage_errors(s3_endpoint: str) -> None:
    storage = S3Storage("elsai-no-such-bucket")
    for call in (
        lambda: storage.read(MSG0),
        lambda: storage.create(MSG0, b"x"),
        lambda: storage.replace(MSG0, b"x", expected_version='"abc"'),
        lambda: storage.list(""),
    ):
        with pytest.raises(StorageError, match="s3://elsai-no-such-bucket/.*NoSuchBucket"):
            call()


def test_s3_accepts_a_client_or_a_boto_session(s3_bucket: str) -> None:
    import boto3

    S3Storage(s3_bucket, client=boto3.client("s3")).create(MSG0, b"from client")
    session = boto3.Session(region_name="us-east-1")
    stored = S3Storage(s3_bucket, boto_session=session).read(MSG0)
    assert stored is not None and stored.data == b"from client"


def test_s3_in_process_mock_aws(aws_env: None) -> None:
    import boto3
    from moto import mock_aws

    with mock_aws():
        boto3.client("s3").create_bucket(Bucket="elsai-in-process")
        storage = S3Storage("elsai-in-process", prefix="p", region_name="us-east-1")
        v1 = storage.create(BOOKMARK, b"one")
        with pytest.raises(SessionConflictError):
            storage.create(BOOKMARK, b"two")
        v2 = storage.replace(BOOKMARK, b"two", expected_version=v1)
        with pytest.raises(SessionConflictError):
            storage.replace(BOOKMARK, b"three", expected_version=v1)
        assert storage.read(BOOKMARK) == StoredObject(b"two", v2)
        assert storage.list("session_s1/") == [BOOKMARK]
