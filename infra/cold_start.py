"""Measure the cold-start import of the agent handler as the Lambda Python 3.12 runtime pays it.

Usage: ``python -m infra.cold_start BUNDLE_DIR [--runtime DIR] [--python EXE] [--runs N]``.
Each run is a fresh interpreter with only ``BUNDLE_DIR`` (and, optionally, a "runtime"
site-packages standing in for the boto3 the Lambda image ships) on the path, no user site and no
bytecode writes (``/var/task`` is read-only on Lambda, so nothing compiled there is kept). It
prints the median wall time of ``import agent_handler`` and the peak RSS after it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

# Moved next to the bundler (elsai.cdk ships it); re-exported for this tool's callers.
from elsai.cdk.precompile import find_python312, lambda_env

_PROBE = (
    "import resource, sys, time\n"
    "t = time.perf_counter()\n"
    "for name in sys.argv[1:]: __import__(name)\n"
    "ms = (time.perf_counter() - t) * 1000\n"
    "u = resource.getrusage(resource.RUSAGE_SELF)\n"
    # Peak RSS of this image: VmHWM. ru_maxrss survives execve, so a big parent would show.
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')]\n"
    "kb = int(hwm[0].split()[1]) if hwm else u.ru_maxrss\n"
    "import json; print(json.dumps({'ms': ms, 'cpu_ms': (u.ru_utime + u.ru_stime) * 1000, "
    "'rss_mb': kb / 1024, 'xray': 'aws_xray_sdk.core' in sys.modules}))\n"
)


def measure(
    bundle: Path,
    runtime: Path | None = None,
    python: str | None = None,
    runs: int = 7,
    *,
    modules: tuple[str, ...] = ("elsai_lambdas.agent_handler",),
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Median import time (ms) and peak RSS (MB) of importing ``modules`` over ``runs``.

    ``env`` adds to the Lambda-like environment (e.g. tracing on); ``xray`` in the result says
    whether the X-Ray SDK was loaded (in every run).
    """
    exe = python or find_python312()
    path = [bundle] + ([runtime] if runtime else [])
    samples = []
    for _ in range(runs):
        # -S: no site-packages of the interpreter itself; Lambda's image has none beyond boto3.
        proc = subprocess.run(
            [exe, "-S", "-c", _PROBE, *modules],
            cwd=bundle,
            env=lambda_env(path, env),
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"import {' '.join(modules)} failed:\n{proc.stderr}")
        samples.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return {
        "import_ms": round(statistics.median(s["ms"] for s in samples)),
        # CPU time of the whole process (startup included): less swayed by a busy machine.
        "cpu_ms": round(statistics.median(s["cpu_ms"] for s in samples)),
        "rss_mb": round(statistics.median(s["rss_mb"] for s in samples), 1),
        "runs": runs,
        "xray": all(s["xray"] for s in samples),
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: print the median cold-start figures of one bundle directory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle_dir", type=Path)
    parser.add_argument("--runtime", type=Path, help="site-packages standing in for Lambda's boto3")
    parser.add_argument("--python", help="interpreter (default: CPython 3.12 from pyenv)")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    r = measure(args.bundle_dir, args.runtime, args.python, args.runs)
    print(
        f"import agent_handler: {r['import_ms']} ms wall, {r['cpu_ms']} ms CPU (process), "
        f"{r['rss_mb']} MB RSS (median of {r['runs']})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
