"""Session storage on a local (POSIX) filesystem.

Durability and single-writer safety come from the filesystem itself, not from a daemon:

- every write goes to an unnamed or hidden temp file in the target directory, is fsynced, and
  only then becomes visible under its key, so readers never see a half-written object;
- `create` publishes with a link, which fails if the key already exists, so two writers can
  never both create the same message file;
- `replace` compares versions and swaps the new file in (`publish.py`) while holding an exclusive
  `flock` on a per-key lock file, so the check and the swap are one step for every process;
- the directory is fsynced after each new entry, so a crash cannot lose a write we reported.

The version of an object is a hash of its bytes: it can be recomputed from any read, and it
changes whenever the content does. (S3 ETags behave the same way for single-part uploads.)
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
from collections.abc import Iterator

from elsai.session.storage import publish
from elsai.session.storage.base import (
    CONFLICT_ADVICE,
    SessionConflictError,
    StorageBackend,
    StorageError,
    StoredObject,
    os_reason,
)
from elsai.session.storage.directories import Directories

_TMP_SUFFIX = ".tmp"
_LOCK_SUFFIX = ".lock"
_READ_SIZE = 1 << 16  # below malloc's mmap threshold: a small read allocates cheaply


class _TempNames:
    """Names for temp files, unique across processes: a random tag per process and a counter.

    A uuid per name costs a getrandom call and an object; this costs a counter step. A forked
    child draws a new tag (`os.register_at_fork`), as its counter would repeat the parent's.
    (`O_EXCL` would refuse a repeat anyway; uniqueness keeps that from ever being needed.)
    """

    def __init__(self) -> None:
        self._tag = ""  # drawn on first use: importing draws nothing
        self._counter: Iterator[int] = itertools.count()

    def next(self) -> str:
        if not self._tag:
            self._tag = f"{os.getpid()}-{os.urandom(6).hex()}"
        return f"{self._tag}-{next(self._counter)}"

    def forget_tag(self) -> None:
        self._tag = ""


_temp_names = _TempNames()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_temp_names.forget_tag)


def content_version(data: bytes) -> str:
    """The version token of `data` on disk: exact, and computable from a plain read."""
    return hashlib.sha256(data).hexdigest()[:32]


def _split_key(key: str, *, allow_prefix: bool = False) -> list[str]:
    """Split a key into path components, refusing anything that could leave the root.

    Components starting with "." are refused too: temp and lock files are hidden that way, so a
    key of that shape could collide with them or vanish from `list()`.
    """
    if not isinstance(key, str):
        raise ValueError(f"storage key must be a string, got {type(key).__name__}")
    if key.startswith("/") or "\\" in key or "\0" in key:
        raise ValueError(f"refusing storage key {key!r}: must be relative with '/' separators")
    if allow_prefix and key == "":
        return []
    parts = key.split("/")
    if allow_prefix and parts[-1] == "":
        parts = parts[:-1]  # "a/b/" names a directory
    for part in parts:
        if part == "" or part.startswith("."):
            raise ValueError(f"refusing storage key {key!r}: empty, '.' or '..' path component")
    return parts


class FileStorage(StorageBackend):
    """Objects as files under `root_dir`; keys are relative paths with '/' separators.

    Args:
        root_dir: The directory everything lives under (created on first write).
        fsync: False keeps every guarantee against a killed *process* (atomic rename,
            exclusive create, conditional replace) but not against power loss or an OS
            crash: the kernel may lose writes it had accepted. Several times faster on
            real disks.
    """

    def __init__(self, root_dir: str | os.PathLike[str], *, fsync: bool = True) -> None:
        """Remember the root; nothing touches the disk until the first call."""
        self.root_dir: str = os.path.abspath(os.fspath(root_dir))
        self._dirs = Directories(fsync=fsync)

    @property
    def fsync(self) -> bool:
        """Whether writes are fsynced (power-loss durable); fixed when the store is made."""
        return self._dirs.fsync

    def __repr__(self) -> str:
        """Where the objects live."""
        return f"FileStorage({self.root_dir!r})"

    # -- paths -------------------------------------------------------------------------------

    def _path(self, key: str) -> str:
        return os.path.join(self.root_dir, *_split_key(key))

    def describe(self, key: str) -> str:
        """The file path of `key`, for error messages."""
        return self._path(key)

    # -- reads -------------------------------------------------------------------------------

    def read(self, key: str) -> StoredObject | None:
        """The file's bytes and content version, or None if there is no such file.

        Raises:
            StorageError: The file exists but cannot be read.
        """
        return _read_path(self._path(key))

    def list(self, prefix: str) -> list[str]:
        """Keys starting with `prefix` (string prefix, as on S3); hidden temp/lock files skipped."""
        parts = _split_key(prefix, allow_prefix=True)
        # Walk the deepest directory the prefix fully names, then filter by the string prefix,
        # so "session_a/agents/agent_" behaves exactly as it would on S3.
        dir_parts = parts if prefix.endswith("/") or not parts else parts[:-1]
        top = os.path.join(self.root_dir, *dir_parts)
        keys: list[str] = []

        def on_error(exc: OSError) -> None:
            if not isinstance(exc, FileNotFoundError | NotADirectoryError):
                raise StorageError(f"cannot list {exc.filename or top}: {os_reason(exc)}") from exc

        for dirpath, dirnames, filenames in os.walk(top, onerror=on_error):
            rel = os.path.relpath(dirpath, self.root_dir)
            base = "" if rel == "." else rel.replace(os.sep, "/") + "/"
            # Descend only into hidden-free directories that can still hold a matching key.
            dirnames[:] = [
                d
                for d in dirnames
                if not d.startswith(".")
                and ((base + d + "/").startswith(prefix) or prefix.startswith(base + d + "/"))
            ]
            for name in filenames:
                if name.startswith("."):
                    continue
                key = base + name
                if key.startswith(prefix):
                    keys.append(key)
        return keys

    # -- writes ------------------------------------------------------------------------------

    def create(self, key: str, data: bytes) -> str:
        """Publish a new file with a link, which never overwrites.

        The bytes go to an unnamed file where the system allows it, else to a hidden temp file
        (`publish.py`). An error from the link after it may have taken effect (an NFS
        retransmit answers EEXIST for its own first attempt) is checked: if the key is our
        file's inode, the write is ours and succeeds.

        Returns:
            The content version of `data`.

        Raises:
            SessionConflictError: The key already holds other bytes.
            StorageError: The filesystem failed.
        """
        path = self._path(key)
        directory = os.path.dirname(path)
        self._dirs.ensure(directory)
        if not self._create_anonymous(directory, path, data):
            tmp, identity = self._write_temp(path, data)
            try:
                os.link(tmp, path)
            except OSError as exc:
                self._unless_ours(path, identity, exc)
            finally:
                _unlink_quietly(tmp)
        self._dirs.sync(directory)
        return content_version(data)

    def _create_anonymous(self, directory: str, path: str, data: bytes) -> bool:
        """Write `data` to an unnamed file and name it `path` (`publish.py`); False: not here."""
        try:
            fd = self._dirs.reopening(directory, lambda: publish.anonymous_file(directory))
        except OSError as exc:
            raise StorageError(f"cannot write {path}: {os_reason(exc)}") from exc
        if fd is None:
            return False
        try:
            self._write_all(fd, path, data)
            try:
                return publish.link_anonymous(fd, path)
            except OSError as exc:
                self._unless_ours(path, _identity(fd), exc)
                return True
        finally:
            os.close(fd)

    def _unless_ours(self, path: str, identity: tuple[int, int] | None, exc: OSError) -> None:
        """Publishing `path` raised `exc`: fine if `path` is now this writer's file (inode)."""
        if self._holds(path, identity):
            return
        if isinstance(exc, FileExistsError):
            raise SessionConflictError(
                f"{path} already exists: another writer created it first; "
                "nothing was overwritten" + CONFLICT_ADVICE
            ) from None
        raise StorageError(f"cannot create {path}: {os_reason(exc)}") from exc

    def replace(self, key: str, data: bytes, *, expected_version: str | None) -> str:
        """Swap in `data` by rename, under a per-key lock, if the version still matches.

        `expected_version=None` means create (the same primitive, so a racing create and
        replace cannot both win). An error from the rename after it may have taken effect is
        checked like `create`'s: the key holding our temp file's inode is success.

        Returns:
            The content version of `data`.

        Raises:
            SessionConflictError: The stored version is another, or the key is missing.
            StorageError: The filesystem failed.
        """
        if expected_version is None:
            return self.create(key, data)
        path = self._path(key)
        directory = os.path.dirname(path)
        self._dirs.ensure(directory)
        tmp, identity = self._write_temp(path, data)
        try:
            with self._locked(path):
                self._check_version(path, expected_version)
                try:
                    publish.swap_in(tmp, path)  # the old file, if exchanged, is unlinked below
                except OSError as exc:
                    if not self._holds(path, identity):
                        raise StorageError(f"cannot replace {path}: {os_reason(exc)}") from exc
                self._dirs.sync(directory)
        finally:
            _unlink_quietly(tmp)  # the old file after an exchange; gone after a rename
        return content_version(data)

    def _check_version(self, path: str, expected_version: str) -> None:
        current = _read_path(path)
        if current is None:
            raise SessionConflictError(
                f"{path} does not exist, but a writer expected version {expected_version}"
            )
        if current.version != expected_version:
            raise SessionConflictError(
                f"{path} changed since it was read (expected version {expected_version}, "
                f"found {current.version}): another writer got there first; "
                "nothing was overwritten" + CONFLICT_ADVICE
            )

    def _holds(self, path: str, identity: tuple[int, int] | None) -> bool:
        """Whether `path` is now this writer's own file: the inode of its temp file.

        The inode proves it (equal bytes would not: a stalled writer repeating its successor's
        write must still be refused).
        """
        return identity is not None and _identity(path) == identity

    # -- helpers -----------------------------------------------------------------------------

    def _write_temp(self, final_path: str, data: bytes) -> tuple[str, tuple[int, int] | None]:
        """Write `data` to a fresh hidden file next to `final_path`, fsynced.

        Returns:
            The temp file's path and its identity (`_identity`).
        """
        directory, name = os.path.split(final_path)
        tmp = f"{directory}{os.sep}.{name}.{_temp_names.next()}{_TMP_SUFFIX}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = self._dirs.reopening(directory, lambda: os.open(tmp, flags, 0o666))
        except OSError as exc:
            raise StorageError(f"cannot write {final_path}: {os_reason(exc)}") from exc
        try:
            self._write_all(fd, final_path, data)
            identity = _identity(fd)
        except BaseException:
            _unlink_quietly(tmp)
            raise
        finally:
            os.close(fd)
        return tmp, identity

    def _write_all(self, fd: int, final_path: str, data: bytes) -> None:
        """All of `data` into `fd` (fsynced with `fsync`); a StorageError names `final_path`."""
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if self.fsync:
                os.fsync(fd)
        except OSError as exc:
            raise StorageError(f"cannot write {final_path}: {os_reason(exc)}") from exc

    @contextlib.contextmanager
    def _locked(self, final_path: str) -> Iterator[None]:
        """Hold an exclusive lock for `final_path`, shared by threads and processes alike.

        The lock lives in its own hidden file: the object file itself is swapped by rename,
        so locking it would lock an inode that is about to be replaced.
        """
        import fcntl  # POSIX only; imported here so importing elsai never needs it

        directory, name = os.path.split(final_path)
        lock_path = os.path.join(directory, f".{name}{_LOCK_SUFFIX}")
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
        except OSError as exc:
            raise StorageError(f"cannot lock {final_path}: {os_reason(exc)}") from exc
        try:
            # flock locks belong to the open file description, so two threads of one process
            # that each open the lock file exclude each other too (unlike POSIX fcntl locks).
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock


def _read_path(path: str) -> StoredObject | None:
    """The bytes at `path` and their version; None if there is no such file.

    Plain `os.read` calls: a buffered file object costs four more system calls per read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {os_reason(exc)}") from exc
    try:
        chunks = []
        while chunk := os.read(fd, _READ_SIZE):
            chunks.append(chunk)
    except OSError as exc:
        raise StorageError(f"cannot read {path}: {os_reason(exc)}") from exc
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return StoredObject(data=data, version=content_version(data))


def _identity(path: str | int) -> tuple[int, int] | None:
    """(device, inode) of a path or an open file, or None if it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _unlink_quietly(path: str) -> None:
    """Remove a temp file; one left behind is hidden from `list()`, so failing here is harmless."""
    with contextlib.suppress(OSError):
        os.unlink(path)
