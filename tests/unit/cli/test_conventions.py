"""What users expect of a command: `python -m elsai` is `elsai`, and `--help` lists every command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from elsai.cli import build_parser


def _run(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_python_m_elsai_is_the_elsai_command(tmp_path: Path) -> None:
    assert _run("-m", "elsai", "--help").stdout == _run("-m", "elsai.cli", "--help").stdout
    via_m, via_cli = (
        _run("-m", "elsai", "local", "run", cwd=tmp_path),
        _run("-m", "elsai.cli", "local", "run", cwd=tmp_path),
    )
    assert (via_m.returncode, via_m.stderr) == (
        via_cli.returncode,
        via_cli.stderr,
    ) and via_m.returncode == 2


def test_help_lists_every_command_on_one_line_each() -> None:
    out = _run("-m", "elsai", "--help").stdout
    groups = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for group, parser in groups.items():
        if parser._subparsers is None:  # a command of its own (`elsai console`)
            (line,) = [x for x in out.splitlines() if x.strip().startswith(f"elsai {group} ")]
            assert len(line.split(maxsplit=2)) == 3, line
            continue
        sub = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
        for command in sub:
            (line,) = [
                x for x in out.splitlines() if x.strip().startswith(f"elsai {group} {command} ")
            ]
            assert len(line.split(maxsplit=3)) == 4, line  # the name and its one-line help
    assert "elsai jobs serve" in out and "elsai local run" in out and "elsai sessions tail" in out
    assert "elsai console" in out
