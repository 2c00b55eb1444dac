"""What every benchmark shares: where results go, the run's environment, small timing helpers.

`write_section` replaces one benchmark's marked section of `results/README.md`, so each
benchmark (and `run_all`'s own part) can be rerun alone without erasing the others.
"""

from __future__ import annotations

import contextlib
import gc
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)  # the repository: children run from here
RESULTS_DIR = os.path.join(HERE, "results")
#: Where the file benchmarks measure on tmpfs (skipped where it is missing).
TMPFS = "/dev/shm"


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def rotated(items: list[Any], by: int) -> list[Any]:
    by %= max(1, len(items))
    return items[by:] + items[:by]


@contextlib.contextmanager
def scratch(prefix: str, under: str | None = None, on: str | None = None) -> Iterator[str]:
    """A directory for a benchmark's samples: a new one inside `under`, left for whoever owns
    `under` to delete, or else a temporary one (in `on`) deleted on exit.

    On this machine's ext4 (no journal) a file created in the half minute after many files
    were deleted costs up to tens of times more (the allocator skips recently freed inodes),
    so a run deletes its samples' files once, after its last measurement.
    """
    if under is not None:
        yield tempfile.mkdtemp(prefix=prefix, dir=under)
        return
    with tempfile.TemporaryDirectory(prefix=prefix, dir=on) as directory:
        yield directory


def settle_disk(enabled: bool = True) -> float:
    """Flush, then wait until files freed by the previous samples no longer slow the next one.

    ext4 without a journal (this machine's root filesystem) skips, when it picks an inode for
    a new file, every free inode freed less than `dirty_expire_centisecs` / 100 seconds ago
    (5 more while its block is dirty), each skip a buffer lookup: after a sample that replaced
    a few hundred files (elsai's bookmark swaps, strands' agent.json, the write order's),
    a file creation costs about 600 us instead of about 50 for that long, whoever makes it.
    Returns the seconds waited (0 when not `enabled`: smoke tests).
    """
    if not enabled:
        return 0.0
    try:
        expire = int(Path("/proc/sys/vm/dirty_expire_centisecs").read_text()) / 100
    except (OSError, ValueError):
        expire = 30.0
    started = time.perf_counter()
    os.sync()
    time.sleep(expire + 6)
    return time.perf_counter() - started


def fs_type(path: str) -> str:
    try:
        out = subprocess.run(["df", "-T", path], capture_output=True, text=True, check=True).stdout
        return out.splitlines()[1].split()[1]
    except Exception:
        return "unknown"


def environment() -> dict[str, Any]:
    from importlib.metadata import version

    try:
        commit = subprocess.run(
            ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", ROOT, "status", "--porcelain", "--", "elsai"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        commit = commit + ("+uncommitted changes in elsai/" if dirty else "")
    except Exception:
        commit = "unknown"
    return {
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "elsai_commit": commit,
        "strands_version": version("strands-agents"),
        "moto_version": version("moto"),
        "boto3_version": version("boto3"),
        "load_average_at_start": os.getloadavg(),
    }


def write_section(text: str, path: str, begin: str, end: str) -> None:
    """Replace a benchmark's section of the README (or append it), leaving the rest alone."""
    old = Path(path).read_text() if os.path.exists(path) else ""
    body = begin + "\n" + text.strip("\n") + "\n" + end
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        new = head + body + rest.split(end, 1)[1]
    else:
        new = (old.rstrip("\n") + "\n\n" if old.strip() else "") + body + "\n"
    with open(path, "w") as f:
        f.write(new)


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


#: How near its floor a figure must be for the floor to be the bar (either way).
NEAR_FLOOR = 1.10


def target_met(elsai: float, peer: float, target: float, floor: float | None = None) -> bool:
    """The ratio target; or, where the floor itself is above it, within 10 % of the floor.

    Within 10 % either way: a figure further below its floor says the floor's costs were
    measured in a slower moment of the run (this machine's disk and CPU are shared), so such a
    floor cannot excuse a missed ratio.
    """
    if elsai / peer <= target:
        return True
    if floor is None or floor / peer <= target:
        return False
    return 1 / NEAR_FLOOR <= elsai / floor <= NEAR_FLOOR
