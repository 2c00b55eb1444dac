"""Measure the cold-start import of the agent handler as the Lambda Python 3.12 runtime pays it.

Usage: ``python -m infra.cold_start BUNDLE_DIR [--runtime DIR] [--python EXE] [--runs N]``.
Each run is a fresh interpreter with only ``BUNDLE_DIR`` (and, optionally, a "runtime"
site-packages standing in for the boto3 the Lambda image ships) on the path, no user site and no
bytecode writes (``/var/task`` is read-only on Lambda, so nothing compiled there is kept). It
prints the median wall time of ``import agent_handler`` and the peak RSS after it.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def find_python312() -> str:
    """CPython 3.12 (the function's runtime): pyenv's, else ``python3.12`` on PATH.

    Raises instead of returning None: the built-bundle tests must not pass by skipping.
    """
    roots = [os.environ.get("PYENV_ROOT", ""), str(Path.home() / ".pyenv"), "/root/.pyenv"]
    candidates = [
        p for r in roots if r for p in sorted(glob.glob(f"{r}/versions/3.12*/bin/python3.12"))
    ]
    candidates.append(shutil.which("python3.12") or "")
    for exe in filter(None, candidates):
        probe = subprocess.run(
            [exe, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True
        )
        if probe.returncode == 0 and probe.stdout.strip() == "(3, 12)":
            return exe
    raise RuntimeError(
        "no CPython 3.12 found (looked in $PYENV_ROOT/versions/3.12*, ~/.pyenv and PATH); "
        "install it, e.g. `pyenv install 3.12`: the Lambda runtime is python3.12"
    )


def lambda_env(path: list[Path], extra: dict[str, str] | None = None) -> dict[str, str]:
    """A minimal, Lambda-like environment: only ``path`` importable, nothing from this machine."""
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": os.pathsep.join(str(p) for p in path),
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "ELSAI_SESSIONS_BUCKET": "bucket",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_SERVICE_NAME": "elsai",
        "POWERTOOLS_METRICS_NAMESPACE": "elsai",
    }
    env.update(extra or {})
    return env


def measure(
    bundle: Path,
    runtime: Path | None = None,
    python: str | None = None,
    runs: int = 7,
    *,
    modules: tuple[str, ...] = ("agent_handler",),
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
