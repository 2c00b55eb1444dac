"""FileStorage when the link/rename took effect but reported an error (an NFS retransmit).

Each publishing call is tested both ways: the Linux calls this machine has (an unnamed file
named by linkat, a rename exchange) and the portable ones used where those are missing.

On NFS a `link` or `rename` whose reply is lost is sent again; the retransmit finds its own
result and answers EEXIST/ENOENT. These tests make the real syscall happen and then raise the
error the retransmit would, and check that the write counts as done only when it really is.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from elsai.session.layout import keys
from elsai.session.storage import (
    FileStorage,
    SessionConflictError,
    StorageError,
    StoredObject,
    publish,
)
from elsai.session.storage.file import content_version

KEY = keys.message_key("s1", "a1", 0)
BOOKMARK = keys.checkpoint_key("s1", "a1")


def _applied_then(error: OSError, real: Callable[..., Any]) -> Callable[..., Any]:
    """`real` runs (the filesystem changes), then `error` is raised as if its reply was lost."""

    def flaky(*args: Any, **kwargs: Any) -> None:
        real(*args, **kwargs)
        raise error

    return flaky


def _not_applied(error: OSError) -> Callable[..., Any]:
    def failing(*args: Any, **kwargs: Any) -> None:
        raise error

    return failing


def _hidden_files(storage: FileStorage, key: str) -> list[str]:
    return [n for n in os.listdir(Path(storage.describe(key)).parent) if n.endswith(".tmp")]


@pytest.mark.parametrize(
    "error", [FileExistsError(errno.EEXIST, "File exists"), OSError(errno.EIO, "I/O error")]
)
def test_create_whose_link_landed_but_reported_an_error_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: OSError
) -> None:
    storage = FileStorage(tmp_path)
    monkeypatch.setattr(publish, "anonymous_file", lambda directory: None)  # where it is missing
    monkeypatch.setattr(os, "link", _applied_then(error, os.link))
    assert storage.create(KEY, b"mine") == content_version(b"mine")
    monkeypatch.undo()
    assert storage.read(KEY) == StoredObject(b"mine", content_version(b"mine"))
    assert _hidden_files(storage, KEY) == []


def test_create_whose_link_failed_is_a_storage_error_and_stores_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = FileStorage(tmp_path)
    monkeypatch.setattr(publish, "anonymous_file", lambda directory: None)  # where it is missing
    monkeypatch.setattr(os, "link", _not_applied(OSError(errno.EIO, "I/O error")))
    with pytest.raises(StorageError, match="I/O error"):
        storage.create(KEY, b"mine")
    monkeypatch.undo()
    assert storage.read(KEY) is None
    assert _hidden_files(storage, KEY) == []


def test_create_over_another_writers_file_is_still_a_conflict(tmp_path: Path) -> None:
    storage = FileStorage(tmp_path)
    version = storage.create(KEY, b"theirs")
    with pytest.raises(SessionConflictError, match="already exists"):
        storage.create(KEY, b"mine")
    assert storage.read(KEY) == StoredObject(b"theirs", version)


def test_replace_whose_rename_landed_but_reported_an_error_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = FileStorage(tmp_path)
    v1 = storage.create(BOOKMARK, b"v1")
    monkeypatch.setattr(publish, "exchange", lambda tmp, path: False)  # where it is missing
    monkeypatch.setattr(
        os, "replace", _applied_then(FileNotFoundError(errno.ENOENT, "No such file"), os.replace)
    )
    assert storage.replace(BOOKMARK, b"v2", expected_version=v1) == content_version(b"v2")
    monkeypatch.undo()
    assert storage.read(BOOKMARK) == StoredObject(b"v2", content_version(b"v2"))


def test_replace_whose_rename_failed_keeps_the_old_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = FileStorage(tmp_path)
    v1 = storage.create(BOOKMARK, b"v1")
    monkeypatch.setattr(publish, "exchange", lambda tmp, path: False)  # where it is missing
    monkeypatch.setattr(os, "replace", _not_applied(OSError(errno.EIO, "I/O error")))
    with pytest.raises(StorageError, match="cannot replace"):
        storage.replace(BOOKMARK, b"v2", expected_version=v1)
    monkeypatch.undo()
    assert storage.read(BOOKMARK) == StoredObject(b"v1", v1)
    assert _hidden_files(storage, BOOKMARK) == []


def test_replace_exchanges_names_here_and_leaves_no_old_file_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = FileStorage(tmp_path, fsync=False)
    v1 = storage.create(BOOKMARK, b"v1")
    monkeypatch.setattr(os, "replace", _not_applied(OSError(errno.EIO, "rename was not used")))
    assert storage.replace(BOOKMARK, b"v2", expected_version=v1) == content_version(b"v2")
    assert storage.read(BOOKMARK) == StoredObject(b"v2", content_version(b"v2"))
    assert _hidden_files(storage, BOOKMARK) == []  # the old bytes went with the temp name


def test_an_exchange_that_landed_but_reported_an_error_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = FileStorage(tmp_path)
    v1 = storage.create(BOOKMARK, b"v1")
    monkeypatch.setattr(
        publish, "exchange", _applied_then(OSError(errno.EIO, "I/O error"), publish.exchange)
    )
    assert storage.replace(BOOKMARK, b"v2", expected_version=v1) == content_version(b"v2")
    monkeypatch.undo()
    assert storage.read(BOOKMARK) == StoredObject(b"v2", content_version(b"v2"))
    assert _hidden_files(storage, BOOKMARK) == []


def test_an_exchange_that_failed_keeps_the_old_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = FileStorage(tmp_path)
    v1 = storage.create(BOOKMARK, b"v1")
    monkeypatch.setattr(publish, "exchange", _not_applied(OSError(errno.EIO, "I/O error")))
    with pytest.raises(StorageError, match="cannot replace"):
        storage.replace(BOOKMARK, b"v2", expected_version=v1)
    monkeypatch.undo()
    assert storage.read(BOOKMARK) == StoredObject(b"v1", v1)
    assert _hidden_files(storage, BOOKMARK) == []


def test_create_names_an_unnamed_file_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = FileStorage(tmp_path, fsync=False)
    monkeypatch.setattr(os, "link", _not_applied(OSError(errno.EIO, "the temp-file link was used")))
    assert storage.create(KEY, b"mine") == content_version(b"mine")
    assert storage.read(KEY) == StoredObject(b"mine", content_version(b"mine"))
    assert _hidden_files(storage, KEY) == []
    with pytest.raises(SessionConflictError, match="already exists"):
        storage.create(KEY, b"again")
    assert storage.read(KEY) == StoredObject(b"mine", content_version(b"mine"))


@pytest.mark.parametrize(
    "error", [FileExistsError(errno.EEXIST, "File exists"), OSError(errno.EIO, "I/O error")]
)
def test_an_unnamed_file_link_that_landed_but_reported_an_error_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: OSError
) -> None:
    storage = FileStorage(tmp_path)
    monkeypatch.setattr(publish, "link_anonymous", _applied_then(error, publish.link_anonymous))
    assert storage.create(KEY, b"mine") == content_version(b"mine")
    monkeypatch.undo()
    assert storage.read(KEY) == StoredObject(b"mine", content_version(b"mine"))


def test_an_unnamed_file_link_that_failed_stores_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = FileStorage(tmp_path)
    monkeypatch.setattr(publish, "link_anonymous", _not_applied(OSError(errno.EIO, "I/O error")))
    with pytest.raises(StorageError, match="I/O error"):
        storage.create(KEY, b"mine")
    monkeypatch.undo()
    assert storage.read(KEY) is None
    assert os.listdir(Path(storage.describe(KEY)).parent) == []


def test_where_unnamed_files_cannot_be_named_the_temp_file_way_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = FileStorage(tmp_path)
    monkeypatch.setattr(publish, "link_anonymous", lambda fd, path: False)  # e.g. no /proc
    assert storage.create(KEY, b"mine") == content_version(b"mine")
    assert storage.read(KEY) == StoredObject(b"mine", content_version(b"mine"))
    assert _hidden_files(storage, KEY) == []
