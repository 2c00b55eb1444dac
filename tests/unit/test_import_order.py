"""Every module of elsai imports first and alone, and `elsai/__init__` works in any order.

An import cycle hides behind a lucky import order: the package works until someone imports a
submodule first (a Lambda handler, a test, `python -c`). Each module therefore gets a fresh
interpreter of its own; a small pool keeps the whole sweep quick.
"""

from __future__ import annotations

import ast
import itertools
import os
import pathlib
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

ROOT = pathlib.Path(__file__).resolve().parents[2]
POOL = min(4, (os.cpu_count() or 2) * 2)

# A fresh interpreter where the package object exists (so submodules import) but nothing of
# elsai has run, not even the package's own `__init__`.
_BARE_PACKAGE = """
import importlib.util, sys
spec = importlib.util.find_spec("elsai")
package = importlib.util.module_from_spec(spec)
sys.modules["elsai"] = package
"""
# ... then `__init__` with its statements in the given order; it must define what it exports.
_INIT = """
exec(compile({init!r}, spec.origin, "exec"), package.__dict__)
missing = [name for name in package.__all__ if not hasattr(package, name)]
assert not missing, missing
"""


def elsai_modules(root: pathlib.Path) -> list[str]:
    """Dotted names of every module under `root`/elsai (`__main__` entry points excluded)."""
    names = []
    for path in sorted((root / "elsai").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__main__":
            continue  # runs the CLI when imported: an entry point, not a module
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def run_python(code: str, root: pathlib.Path) -> subprocess.CompletedProcess[str]:
    """`code` in a fresh interpreter that finds elsai under `root` first."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def first_and_alone(module: str, root: pathlib.Path) -> str:
    """A program importing `module` before anything else of elsai (`elsai`: its __init__)."""
    if module == "elsai":
        return init_in_order((root / "elsai" / "__init__.py").read_text())
    return _BARE_PACKAGE + f"import {module}\n"


def init_in_order(source: str) -> str:
    """A program running `source` as `elsai/__init__` before anything else of elsai."""
    return _BARE_PACKAGE + _INIT.format(init=source)


def failing_imports(modules: Sequence[str], root: pathlib.Path) -> dict[str, str]:
    """Modules whose first-and-alone import fails, with the tail of the error."""
    programs = [first_and_alone(m, root) for m in modules]
    with ThreadPoolExecutor(max_workers=POOL) as pool:
        runs = list(pool.map(lambda code: run_python(code, root), programs))
    return {m: r.stderr[-600:] for m, r in zip(modules, runs, strict=True) if r.returncode}


def init_orders(root: pathlib.Path) -> list[str]:
    """`elsai/__init__.py` rewritten with its import statements in every possible order."""
    tree = ast.parse((root / "elsai" / "__init__.py").read_text())
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    rest = [n for n in tree.body if n not in imports]
    return [
        "\n".join(ast.unparse(n) for n in [*order, *rest])
        for order in itertools.permutations(imports)
    ]


def failing_init_orders(root: pathlib.Path) -> dict[str, str]:
    """Orders of `elsai/__init__`'s imports that fail, with the tail of the error."""
    sources = init_orders(root)
    with ThreadPoolExecutor(max_workers=POOL) as pool:
        runs = list(pool.map(lambda s: run_python(init_in_order(s), root), sources))
    return {s: r.stderr[-600:] for s, r in zip(sources, runs, strict=True) if r.returncode}


def test_every_module_imports_first_and_alone() -> None:
    modules = elsai_modules(ROOT)
    # The sweep covers the whole package (the optional providers too: dev installs them).
    assert len(modules) > 90
    assert {"elsai.loop.loop", "elsai.models.anthropic", "elsai.session.write.binding"} <= set(
        modules
    )
    assert failing_imports(modules, ROOT) == {}


def test_package_init_imports_work_in_any_order() -> None:
    orders = init_orders(ROOT)
    assert len(orders) >= 6  # at least three imports, all six orders
    assert failing_init_orders(ROOT) == {}


def test_the_sweep_sees_a_cycle(tmp_path: pathlib.Path) -> None:
    """The checks above can fail: a package whose submodules import each other at the top
    fails for every module imported first, and in both orders of its `__init__`."""
    fake = tmp_path
    pkg = fake / "elsai"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from elsai.low import LOW\nfrom elsai.high import HIGH\n__all__ = ['HIGH', 'LOW']\n"
    )
    (pkg / "high.py").write_text("from elsai.low import LOW\nHIGH = 'high'\n")
    (pkg / "low.py").write_text("from elsai.high import HIGH\nLOW = 'low'\n")
    failures = failing_imports(elsai_modules(fake), fake)
    assert set(failures) == {"elsai", "elsai.high", "elsai.low"}
    assert "partially initialized module" in failures["elsai.low"]
    assert len(failing_init_orders(fake)) == 2
