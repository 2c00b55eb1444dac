"""What every benchmark shares: where results go, the run's environment, small timing helpers.

`write_section` replaces one benchmark's marked section of `results/README.md`, so each
benchmark (and `run_all`'s own part) can be rerun alone without erasing the others.
"""

from __future__ import annotations

import gc
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS_DIR = os.path.join(HERE, "results")


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
            ["git", "-C", os.path.dirname(HERE), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", os.path.dirname(HERE), "status", "--porcelain", "--", "elsai"],
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
