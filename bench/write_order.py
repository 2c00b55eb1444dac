"""The file operations elsai's write order needs per tool cycle, as bare system calls.

This is the floor under the SDK on local files: the same files, in the same order, with the
same fsyncs and the same overlap, and no Python work around them. A tool cycle with
`CheckpointConfig(position="both")` stores (elsai/session/storage/file.py, publish.py):

1. the assistant toolUse message: a new file, written unnamed (`O_TMPFILE`) and linked under
   its name, which fails if the name exists (never overwrite a message);
2. the after_model bookmark: a new temp file, then, under the bookmark's lock, a read of the
   current bookmark (the replace is conditional on the version last read) and a rename
   exchange; the old file is unlinked;
3. the user toolResult message, as 1;
4. the after_tools bookmark, as 2. With `fsync=True` elsai runs it in the background
   (`overlap_bookmark`), alongside the next model call and the write of its reply, and the
   next after_model bookmark waits for it; with `fsync=False` it runs in line.

With fsync, every file's data is fsynced before it gets its name and the directory after:
nothing is named before its bytes are durable, and nothing later names it before its entry is.

Each of the four is a new inode (a replace needs one: a rename is the only atomic swap), so
four file creations per cycle where strands-agents' FileSessionManager makes three (two
messages and agent.json). On this machine's disk a file creation costs from about 10 us to
about 900 us depending on how many files were freed in the last 35 s (ext4 without a
journal: `bench.common.settle_disk`), which is why the floor is measured in the same run as
the sides, not assumed.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable

_LIBC = ctypes.CDLL(None, use_errno=True)
_AT_FDCWD, _AT_SYMLINK_FOLLOW, _RENAME_EXCHANGE = -100, 0x400, 2
#: Sizes as the bench workload stores them (a message record, a bookmark).
MESSAGE = b"m" * 300
BOOKMARK = b"b" * 196
#: New files per cycle: elsai (two messages, two bookmark swaps) and strands (two messages,
#: agent.json replaced once).
CREATES_PER_CYCLE = {"elsai": 4, "strands": 3}


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_message(directory: str, name: str, fsync: bool) -> None:
    """A message file: unnamed file, data (fsync), link under its name, directory (fsync)."""
    fd = os.open(directory, os.O_WRONLY | os.O_TMPFILE | os.O_CLOEXEC, 0o666)
    try:
        os.write(fd, MESSAGE)
        if fsync:
            os.fsync(fd)
        source = f"/proc/self/fd/{fd}".encode()
        target = os.fsencode(os.path.join(directory, name))
        if _LIBC.linkat(_AT_FDCWD, source, _AT_FDCWD, target, _AT_SYMLINK_FOLLOW) != 0:
            raise OSError(ctypes.get_errno(), "linkat failed", name)
    finally:
        os.close(fd)
    if fsync:
        _fsync_dir(directory)


def replace_bookmark(directory: str, serial: int, fsync: bool) -> None:
    """A conditional replace: temp file (fsync), lock, read the current one, exchange,
    directory (fsync), unlink the old file."""
    live = os.path.join(directory, "checkpoint.json")
    tmp = os.path.join(directory, f".checkpoint.json.{serial}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        os.write(fd, BOOKMARK)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
    lock = os.open(os.path.join(directory, ".checkpoint.json.lock"), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        current = os.open(live, os.O_RDONLY)
        try:
            os.read(current, 1 << 16)
        finally:
            os.close(current)
        if _LIBC.renameat2(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(live),
                           _RENAME_EXCHANGE) != 0:  # fmt: skip
            raise OSError(ctypes.get_errno(), "renameat2 failed", live)
        if fsync:
            _fsync_dir(directory)
    finally:
        os.close(lock)
    os.unlink(tmp)


class _Behind:
    """At most one write running in a background thread, joined before the next boundary."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None

    def start(self, write: Callable[[], None]) -> None:
        self.settle()
        self._thread = threading.Thread(target=write)
        self._thread.start()

    def settle(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None


def replay(parent: str, cycles: int, fsync: bool) -> float:
    """Seconds per tool cycle of the write order alone, in a new directory under `parent`.

    The after_tools bookmark overlaps the next cycle's first message write when `fsync`
    (elsai's `overlap_bookmark` default there), and runs in line otherwise.
    """
    agent_dir = tempfile.mkdtemp(prefix="write-order-", dir=parent)
    messages = os.path.join(agent_dir, "messages")
    os.mkdir(messages)
    with open(os.path.join(agent_dir, "checkpoint.json"), "wb") as f:
        f.write(BOOKMARK)
    behind = _Behind()
    os.sync()  # as the sides' children do before their timed run
    started = time.perf_counter()
    for cycle in range(cycles):
        create_message(messages, f"message_{2 * cycle}.json", fsync)
        behind.settle()
        replace_bookmark(agent_dir, 2 * cycle, fsync)
        create_message(messages, f"message_{2 * cycle + 1}.json", fsync)
        if fsync:
            behind.start(lambda c=cycle: replace_bookmark(agent_dir, 2 * c + 1, True))
        else:
            replace_bookmark(agent_dir, 2 * cycle + 1, False)
    behind.settle()
    return (time.perf_counter() - started) / cycles


def floor(own_on_tmpfs: float, order_on_tmpfs: float, order_on_disk: float) -> float:
    """elsai's floor on this disk: its own work (measured on tmpfs, where files cost little)
    with the write order's cost there swapped for the write order's cost on this disk, i.e.
    what elsai would take if it added nothing to the file operations its promises need."""
    return own_on_tmpfs - order_on_tmpfs + order_on_disk


def durable_write_cost(parent: str, samples: int = 200) -> float:
    """Median seconds of one durable small-file write alone (temp file + fsync, link,
    directory fsync), in a new directory under `parent` (left for its owner to delete)."""
    directory = tempfile.mkdtemp(prefix="files-durable-probe-", dir=parent)
    times = []
    for i in range(samples):
        tmp, final = os.path.join(directory, f".t{i}"), os.path.join(directory, f"m{i}")
        started = time.perf_counter()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        os.write(fd, b"x" * 400)
        os.fsync(fd)
        os.close(fd)
        os.link(tmp, final)
        os.unlink(tmp)
        _fsync_dir(directory)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def wal_append_cost(parent: str, samples: int = 200) -> float:
    """Median seconds of one durable append as a reused write-ahead log makes it (pwrite into an
    existing, already allocated file, then fdatasync: data only, no metadata to commit)."""
    path = os.path.join(tempfile.mkdtemp(prefix="files-durable-wal-", dir=parent), "wal")
    times = []
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        os.write(fd, b"\0" * 4096 * samples)
        os.fsync(fd)
        for i in range(samples):
            started = time.perf_counter()
            os.pwrite(fd, b"x" * 400, i * 4096)
            os.fdatasync(fd)
            times.append(time.perf_counter() - started)
    finally:
        os.close(fd)
    return statistics.median(times)
