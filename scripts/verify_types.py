"""The wheel as users' type checkers see it: pyright's type completeness score of elsai's public API.

Builds the wheel from this checkout, checks that both packages carry their ``py.typed`` marker,
installs it without dependencies into a scratch folder, and runs the pinned pyright from
node_modules (package.json) as ``pyright --verifytypes elsai --ignoreexternal`` with the dev venv's
interpreter, the scratch folder first on its path. The editable install of the dev venv is an
import hook, which pyright cannot follow, and the checkout would miss what the wheel leaves out.
Prints pyright's counts, the symbols it could not type and the score; exits 1 below the floor.

Usage: python scripts/verify_types.py [--min 95] [--show 40]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PYRIGHT = ROOT / "node_modules" / ".bin" / "pyright"
PACKAGE = "elsai"
MARKERS = ("elsai/py.typed", "elsai_lambdas/py.typed")
SOURCES = ("pyproject.toml", "setup.py", "LICENSE", "README.md", "elsai", "lambdas")


def build_wheel(work: Path) -> Path:
    """The wheel of the files git knows (tracked, or new and not ignored) under SOURCES."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *SOURCES],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    src = work / "src"
    for name in filter(None, listed):
        if (ROOT / name).is_file():  # a tracked file deleted in the work tree is left out
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    built = subprocess.run(
        [*pip, "wheel", "--no-deps", "-w", str(work / "dist"), str(src)],
        capture_output=True, text=True,
    )  # fmt: skip
    if built.returncode:  # setuptools' warnings are noise unless the build failed
        sys.exit(f"pip wheel failed:\n{built.stdout}{built.stderr}")
    return next((work / "dist").glob("elsai-*.whl"))


def missing_markers(wheel: Path) -> list[str]:
    """The py.typed files the wheel lacks (without one, checkers treat the package as untyped)."""
    names = set(zipfile.ZipFile(wheel).namelist())
    return [marker for marker in MARKERS if marker not in names]


def verify(site: Path) -> dict[str, Any]:
    """pyright's --verifytypes report (JSON) for PACKAGE as installed in `site`."""
    if not PYRIGHT.exists():
        sys.exit(f"{PYRIGHT} is missing: run `make setup` (npm ci installs pyright)")
    out = subprocess.run(
        [str(PYRIGHT), "--pythonpath", sys.executable, "--verifytypes", PACKAGE,
         "--ignoreexternal", "--outputjson"],
        cwd=site, env={**os.environ, "PYTHONPATH": str(site)}, capture_output=True, text=True,
    )  # fmt: skip
    try:  # pyright exits 1 whenever a symbol is incomplete: the JSON is the answer
        report: dict[str, Any] = json.loads(out.stdout)
    except json.JSONDecodeError:
        sys.exit(f"pyright gave no report (exit {out.returncode}):\n{out.stdout}\n{out.stderr}")
    return report


def incomplete(completeness: dict[str, Any]) -> list[tuple[str, str]]:
    """(symbol, first line of each diagnostic) for the exported symbols pyright could not type."""
    rows = []
    for symbol in completeness["symbols"]:
        if symbol["isExported"] and not symbol["isTypeKnown"]:
            for diagnostic in symbol["diagnostics"] or [{"message": "ambiguous type"}]:
                rows.append((symbol["name"], diagnostic["message"].splitlines()[0]))
    return rows


def main() -> int:
    """Build, check the markers, verify, print, and compare with the floor."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min", type=float, default=95.0, help="the floor, in percent")
    parser.add_argument("--show", type=int, default=40, help="incomplete symbols to list")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="elsai-verify-types-") as tmp:
        work = Path(tmp)
        wheel = build_wheel(work)
        if missing := missing_markers(wheel):
            print(f"{wheel.name} lacks {', '.join(missing)}: type checkers will see no types")
            return 1
        site = work / "site"
        subprocess.run(
            [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", "install",
             "--no-deps", "--target", str(site), str(wheel)],
            check=True,
        )  # fmt: skip
        report = verify(site)
    completeness = report["typeCompleteness"]
    exported, other = completeness["exportedSymbolCounts"], completeness["otherSymbolCounts"]
    score = 100 * completeness["completenessScore"]
    rows = incomplete(completeness)
    print(f"pyright {report['version']} --verifytypes {PACKAGE} --ignoreexternal on {wheel.name}")
    print(f"py.typed in the wheel: {', '.join(MARKERS)}")
    for name, symbol, diagnostic in ((n, *row) for n, row in enumerate(rows[: args.show], 1)):
        print(f"  {name:3}. {symbol}: {diagnostic}")
    if len(rows) > args.show:
        print(f"  ... and {len(rows) - args.show} more (--show N lists more)")
    for title, counts in (("exported", exported), ("other referenced", other)):
        total = sum(counts.values())
        print(f"symbols {title}: {total} (known {counts['withKnownType']}, ambiguous "
              f"{counts['withAmbiguousType']}, unknown {counts['withUnknownType']})")  # fmt: skip
    print(f"type completeness score: {score:.1f} % (floor {args.min:g} %)")
    return 0 if score >= args.min else 1


if __name__ == "__main__":
    sys.exit(main())
