"""The Python examples of README.md and docs/*.md run as written, so the docs cannot drift.

Each ```python block runs in a fresh interpreter in an empty directory. A block whose first
line is `# requires: ...` needs something this machine does not have (AWS credentials, a
user's own client); it is compiled, not run, and the test pins which blocks those are.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
# Every page whose examples are run: the README and the serverless runtime's docs.
PAGES = ("README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")))


def blocks(name: str) -> list[str]:
    return BLOCK.findall((ROOT / name).read_text())


def runnable(name: str) -> list[str]:
    return [b for b in blocks(name) if not b.startswith("# requires:")]


def test_only_the_declared_blocks_are_not_run() -> None:
    skipped = {
        name: [b.splitlines()[0] for b in blocks(name) if b.startswith("# requires:")]
        for name in PAGES
    }
    assert {name: lines for name, lines in skipped.items() if lines} == {
        "README.md": [
            "# requires: AWS credentials for Amazon Bedrock (the offline recipe below runs anywhere)",
            "# requires: your payments client (a sketch of the idempotency-key pattern)",
            "# requires: your MCP servers (my_server.py over stdio, one on 127.0.0.1:8000 over HTTP)",
            '# requires: aws-cdk-lib (pip install "elsai[cdk]") and your my_agents package',
        ],
        "docs/jobs-api.md": ["# requires: a deployed stack (API_URL) and AWS credentials"],
    }
    for name in PAGES:
        for block in blocks(name):
            compile(block, name, "exec")


def test_the_docs_pages_are_all_covered() -> None:
    """A page added to docs/ (or one renamed) has its examples run without editing this file."""
    assert {"docs/deploying.md", "docs/local-runtime.md", "docs/jobs-api.md"} <= set(PAGES)
    assert sum(len(runnable(name)) for name in PAGES if name.startswith("docs/")) >= 3


@pytest.mark.parametrize(
    ("name", "index"),
    [(n, i) for n in PAGES for i in range(len(runnable(n)))],
)
def test_readme_block_runs(name: str, index: int, tmp_path: Path) -> None:
    source = runnable(name)[index]
    out = subprocess.run(
        [sys.executable, "-c", source],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=420,  # a block may synthesize a CDK app (tens of seconds on a loaded machine)
        env={**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)},
    )
    assert out.returncode == 0, f"{name} block {index}:\n{source}\n{out.stderr}"
    expected = re.findall(r"^# (True|False) (.*)$", source, re.M)
    for flag, rest in expected:  # a printed line the README shows as a comment
        assert f"{flag} {rest}" in out.stdout, out.stdout


def test_the_offline_recipe_resumes_with_the_tool_completed_once() -> None:
    recipe = next(b for b in runnable("README.md") if "PositionalScriptedModel" in b)
    assert 'assert shipped == ["o-42"]' in recipe and "resumed_from_checkpoint" in recipe


def test_readme_examples_pass_mypy_strict(tmp_path: Path) -> None:
    """A user's type checker sees elsai as a typed package: README's examples pass --strict.

    The checkout is on mypy's path the way an installed package is (PYTHONPATH, not the files
    given), so mypy reads elsai's own annotations only through its py.typed marker, and errors
    inside elsai are not the examples' errors. No project config: a user's strict defaults.
    """
    files = []
    for index, source in enumerate(runnable("README.md")):
        files.append(tmp_path / f"readme_{index}.py")
        files[-1].write_text(source)
    (tmp_path / "mypy.ini").write_text("[mypy]\n")
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", "mypy.ini",
         "--cache-dir", str(tmp_path / ".mypy_cache"), *map(str, files)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)},
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"no issues found in {len(files)} source files" in out.stdout
