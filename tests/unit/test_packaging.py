"""The wheel's package list (pyproject.toml) names every package folder of elsai and the handlers.

setuptools cannot combine package discovery with the ``lambdas/`` -> ``elsai_lambdas`` mapping,
so the list is explicit; a sub-package added without its entry would be missing from the wheel.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

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
    assert "lock-py312.txt" in tool["package-data"]["elsai_lambdas"]
    # PEP 561 markers: without them users' type checkers treat both packages as untyped.
    assert "py.typed" in tool["package-data"]["elsai"]
    assert "py.typed" in tool["package-data"]["elsai_lambdas"]
    assert (ROOT / "elsai" / "py.typed").is_file() and (ROOT / "lambdas" / "py.typed").is_file()
    assert (ROOT / "lambdas" / "lock-py312.txt").is_file()
