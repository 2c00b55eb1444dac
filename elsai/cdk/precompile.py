"""Bytecode for the modules the Lambda init phase imports, compiled by CPython 3.12 at bundle time.

``/var/task`` is read-only on Lambda, so without ``.pyc`` files in the bundle every cold start
compiles each imported module from source (~0.5 s of CPU for boto3, pydantic, Powertools and
elsai). Compiling everything would add ~4 MB zipped of bytecode for modules nothing imports, so
only what importing the handlers loads is compiled. The handlers are imported as a
pre-initialized (SnapStart) init runs them, which also does the first invocation's one-time
work (lambdas/snapstart.py), so what an on-demand cold start defers is compiled too; and the
X-Ray SDK, which only a traced function imports. The ``.pyc`` files are ``unchecked-hash``
(used without comparing source timestamps, which the zip does not keep exactly) and written by a
fresh interpreter with a fixed hash seed, so the same sources give the same bytes (the asset hash
stays stable). Without a 3.12 interpreter the bundle is left as source, with a warning.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

# Runs inside the bundle: import each handler module, list the bundle's .py files now loaded.
_LIST = """
import importlib, json, os, sys
root = os.path.realpath(os.getcwd())
failed = []
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception as exc:
        failed.append(f"{name}: {type(exc).__name__}: {exc}")
files = set()
for module in list(sys.modules.values()):
    path = getattr(module, "__file__", None) or ""
    real = os.path.realpath(path)
    if real.endswith(".py") and real.startswith(root + os.sep):
        files.add(os.path.relpath(real, root))
print(json.dumps({"files": sorted(files), "failed": failed}))
"""


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


#: Imported only when needed at run time, compiled anyway (tracing on: the X-Ray SDK).
LAZY_MODULES = ("aws_xray_sdk.core",)
#: The listing imports the handlers as a pre-initialized init does (see the module docstring).
_LIST_ENV = {"PYTHONHASHSEED": "0"}


def precompile_init_imports(bundle: Path, modules: list[str], factory: str | None = None) -> int:
    """Compile what importing ``modules`` loads from ``bundle``; returns the number of files.

    ``factory``: the agent factory a pre-initialized init warms up (its imports are compiled
    too); without one the listing imports the handlers as an on-demand init does.
    """
    if not modules:
        return 0
    try:
        exe = find_python312()
    except RuntimeError as exc:
        print(f"warning: bundle left uncompiled (slower cold starts): {exc}", file=sys.stderr)
        return 0
    extra = dict(_LIST_ENV)
    if factory:  # a pre-initialized (SnapStart) init warms the factory up
        extra.update(AWS_LAMBDA_INITIALIZATION_TYPE="snap-start", ELSAI_AGENT_FACTORY=factory)
    env = lambda_env([bundle], extra)
    listed = subprocess.run(
        [exe, "-S", "-c", _LIST, *modules], cwd=bundle, env=env, capture_output=True, text=True
    )
    if listed.returncode != 0:
        raise RuntimeError(f"listing the init imports failed:\n{listed.stderr}")
    report = json.loads(listed.stdout.strip().splitlines()[-1])
    for failure in report["failed"]:
        print(f"warning: {failure} (not precompiled)", file=sys.stderr)
    files: list[str] = report["files"]
    compiled = subprocess.run(
        [exe, "-S", "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", "-i", "-"],
        cwd=bundle,
        env={k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"},
        input="\n".join(files) + "\n",
        capture_output=True,
        text=True,
    )
    if compiled.returncode != 0:
        raise RuntimeError(f"compileall failed:\n{compiled.stdout}\n{compiled.stderr}")
    return len(files)
