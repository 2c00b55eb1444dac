"""FileStorage remembers the directories it made, and copes when one is deleted under it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from elsai.session.layout import keys
from elsai.session.storage import FileStorage
from elsai.session.storage.file import _temp_names

BOOKMARK = keys.checkpoint_key("s1", "a1")


@pytest.mark.parametrize("anonymous", [True, False], ids=["unnamed-file", "portable"])
def test_a_session_deleted_under_a_writer_is_made_again_on_its_next_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, anonymous: bool
) -> None:
    if not anonymous:
        monkeypatch.setattr("elsai.session.storage.publish._anonymous_ok", False)
    storage = FileStorage(tmp_path, fsync=False)
    storage.create(keys.message_key("s1", "a1", 0), b"first")
    version = storage.create(BOOKMARK, b"one")
    shutil.rmtree(
        tmp_path / BOOKMARK.split("/")[0]
    )  # e.g. `elsai sessions delete` while the agent runs

    storage.create(keys.message_key("s1", "a1", 1), b"second")
    stored = storage.read(keys.message_key("s1", "a1", 1))
    assert stored is not None and stored.data == b"second"
    # the bookmark is gone: a replace is refused as a conflict, and a create makes it again
    with pytest.raises(Exception, match="does not exist"):
        storage.replace(BOOKMARK, b"two", expected_version=version)
    storage.create(BOOKMARK, b"three")
    again = storage.read(BOOKMARK)
    assert again is not None and again.data == b"three"


def test_a_replace_whose_directory_vanished_makes_it_and_writes_no_stray_temp_file(
    tmp_path: Path,
) -> None:
    storage = FileStorage(tmp_path, fsync=False)
    storage.create(BOOKMARK, b"one")
    directory = Path(storage.describe(BOOKMARK)).parent
    shutil.rmtree(directory)
    with pytest.raises(Exception, match="does not exist"):
        storage.replace(BOOKMARK, b"two", expected_version="v")
    assert directory.is_dir()
    assert [n for n in os.listdir(directory) if n.endswith(".tmp")] == []


def test_temp_names_differ_in_a_forked_child() -> None:
    parent = _temp_names.next()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its next name, then leave without cleanup
        os.write(write, _temp_names.next().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    child = os.read(read, 200).decode()
    os.close(read)
    assert child and child.split("-")[0] == str(pid)
    assert child.rsplit("-", 1)[0] != parent.rsplit("-", 1)[0]
    assert _temp_names.next() not in (parent, child)
