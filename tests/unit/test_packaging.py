"""The wheel's package list (pyproject.toml) names every package folder of elsai and the handlers.

setuptools cannot combine package discovery with the ``lambdas/`` -> ``elsai_lambdas`` mapping,
so the list is explicit; a sub-package added without its entry would be missing from the wheel.
"""

from __future__ import annotations

import importlib.resources
import re
import subprocess
import tomllib
from pathlib import Path

from elsai.cdk.lock import LOCK_FILE
from elsai.serverless.contract import HANDLERS_PACKAGE, LAMBDA_LOCK, LAMBDA_LOCK_NAME

ROOT = Path(__file__).resolve().parents[2]


def _package_folders(folder: Path, name: str) -> set[str]:
    return {
        ".".join([name, *init.parent.relative_to(folder).parts])
        for init in folder.rglob("__init__.py")
        if "__pycache__" not in init.parts
    }


def test_every_package_folder_is_in_the_wheel_and_nothing_else() -> None:
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(tool["packages"])
    assert tool["package-dir"] == {"elsai_lambdas": "lambdas"}
    folders = _package_folders(ROOT / "elsai", "elsai") | _package_folders(
        ROOT / "lambdas", "elsai_lambdas"
    )
    assert listed == folders
    assert LAMBDA_LOCK_NAME in tool["package-data"][HANDLERS_PACKAGE]


def test_the_lambda_lock_is_where_every_part_says() -> None:
    assert LOCK_FILE == ROOT / "lambdas" / LAMBDA_LOCK_NAME  # this checkout's editable install
    assert LOCK_FILE.is_file()
    assert (importlib.resources.files(HANDLERS_PACKAGE) / LAMBDA_LOCK_NAME).is_file()
    # `make lock-lambda` writes where LOCK_FILE is, asking elsai.cdk.lock, not naming a path.
    assert '-o "$$($(PY) -m elsai.cdk.lock path)"' in (ROOT / "Makefile").read_text()


def test_no_file_names_a_lambda_lock_that_does_not_exist() -> None:
    tracked = subprocess.run(
        ["git", "ls-files", "Makefile", "README.md", "elsai", "lambdas", "docs", "scripts"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    named = re.compile(r"[\w./-]*(?:lock|lambda)-py3\d+\.txt")
    allowed = {LAMBDA_LOCK_NAME, LAMBDA_LOCK, f"lambdas/{LAMBDA_LOCK_NAME}"}
    stale = {
        f"{path}: {name}"
        for path in tracked
        if (ROOT / path).suffix in {"", ".py", ".md", ".sh", ".txt", ".toml"}
        for name in named.findall((ROOT / path).read_text(errors="replace"))
        if name.strip("./`") not in allowed
    }
    assert not stale
