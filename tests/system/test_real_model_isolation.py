"""`make test` never collects tests/system/real_model: they need the llama.cpp venv (make e2e-real)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_default_run_does_not_collect_or_import_the_real_model_tests() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/system/real_model",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 5, out.stdout + out.stderr  # 5: no tests collected
    assert "real_model" not in out.stdout and "llama" not in out.stdout + out.stderr
    # With the default addopts lifted they are there, all marked real_model.
    listed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "-m",
            "not real_model",
            "tests/system/real_model",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "deselected" in listed.stdout and "test_real_model.py::" not in listed.stdout
