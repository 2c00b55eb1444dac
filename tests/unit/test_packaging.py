"""The wheel's package list (pyproject.toml) names every package folder of elsai and the handlers.

setuptools cannot combine package discovery with the ``lambdas/`` -> ``elsai_lambdas`` mapping,
so the list is explicit; a sub-package added without its entry would be missing from the wheel.
"""

from __future__ import annotations

import importlib.resources
import re
import runpy
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
    assert "py.typed" in tool["package-data"]["elsai"]
    assert "py.typed" in tool["package-data"]["elsai_lambdas"]
    assert (ROOT / "elsai" / "py.typed").is_file() and (ROOT / "lambdas" / "py.typed").is_file()


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


SETUP = runpy.run_path(str(ROOT / "setup.py"), run_name="setup_under_test")
_LINK = re.compile(
    r"!?\[[^\]]*\]\(([^)\s]+)|^ {0,3}\[[^\]]+\]:\s*(\S+)|(?:href|src)=\"([^\"]+)\"", re.M
)


def _targets(markdown: str) -> list[str]:
    """Link and image targets outside fenced code blocks."""
    prose = re.sub(r"(?ms)^ {0,3}```.*?^ {0,3}```[^\n]*$", "", markdown)
    return [next(g for g in m.groups() if g) for m in _LINK.finditer(prose)]


def test_the_package_page_has_no_relative_link_and_every_link_is_a_real_file() -> None:
    repository = SETUP["repository_url"]()
    readme = (ROOT / "README.md").read_text()
    page = SETUP["long_description"]()
    assert len(_targets(page)) == len(_targets(readme)) > 10  # the same links, rewritten
    for target in _targets(page):
        assert re.match(r"^(https?:|mailto:)", target), target
        if target.startswith(repository):
            kind, ref, path = target[len(repository) + 1 :].split("/", 2)
            assert (kind, ref) in {("blob", "main"), ("tree", "main"), ("raw", "main")}, target
            assert (ROOT / path.split("#", 1)[0]).exists(), target  # README's link is not dead


def test_links_are_made_absolute_by_kind_and_code_is_left_alone() -> None:
    readme = (
        "See [the guide](docs/guide.md#setup), [an example](./examples/app/), "
        '[top](#install) and [PyPI](https://pypi.org/p/elsai "its page").\n'
        "![shot](docs/img/a.png)\n\n"
        "```python\nresult = tools[0](docs)\n```\n"
        "[ref]: docs/ref.md\n"
    )
    assert SETUP["absolute_links"](readme, "https://example.org/r") == (
        "See [the guide](https://example.org/r/blob/main/docs/guide.md#setup), "
        "[an example](https://example.org/r/tree/main/examples/app/), "
        '[top](https://example.org/r#install) and [PyPI](https://pypi.org/p/elsai "its page").\n'
        "![shot](https://example.org/r/raw/main/docs/img/a.png)\n\n"
        "```python\nresult = tools[0](docs)\n```\n"
        "[ref]: https://example.org/r/blob/main/docs/ref.md\n"
    )


def test_the_repository_address_is_written_once() -> None:
    repository = SETUP["repository_url"]()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["urls"] == {"Repository": repository}
    assert "readme" in project["dynamic"] and "readme" not in project  # built by setup.py
    found = subprocess.run(
        ["git", "grep", "-l", "-F", repository.split("://", 1)[1]],
        cwd=ROOT, capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    assert found == ["pyproject.toml"]


def test_the_license_file_is_apache_2_and_ships() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "END OF TERMS AND CONDITIONS" in text
