"""Docker-free packaging of the Lambda bundle.

The bundle is the handler package (``elsai_lambdas``, source in ``lambdas/``) + the ``elsai`` package (without ``elsai.cdk``, which only
synthesis needs) + the user's agent code (``DurableAgentService(code=...)``) + the locked runtime dependencies
(``lambdas/lock-py312.txt``, boto3 and botocore included), installed by pip with
``--require-hashes`` for the Lambda platform (manylinux x86_64, CPython 3.12) rather than for
this machine, so pydantic-core's compiled wheel matches the Lambda runtime.

boto3/botocore are bundled on purpose: S3 session storage needs ``PutObject`` ``IfMatch``
(botocore >= 1.35.69) and the runtime's boto3 is whatever AWS ships in that region that month.
Only the botocore service models named in ``[tool.elsai.lambda-bundle]`` are kept (the full set
is ~16 MB zipped that no handler loads).

Tests synthesize the stack often, so the pip output is cached under
``~/.cache/elsai/lambda-deps/<key>/`` (``$XDG_CACHE_HOME`` is honoured) where the
key hashes the lock and the target platform; a re-run only copies files.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import aws_cdk as cdk
import jsii
from aws_cdk import aws_lambda as lambda_

from elsai.cdk.lock import (
    BUNDLE_ONLY_REQUIREMENTS,
    HANDLERS_DIR,
    LOCK_FILE,
    PACKAGE_DIR,
    botocore_services,
    lambda_requirements,
    locked_versions,
    requirement_name,
    unsatisfied,
)
from elsai.cdk.precompile import LAZY_MODULES, precompile_init_imports
from elsai.serverless.contract import HANDLER_MODULES, HANDLERS_PACKAGE

__all__ = [
    "BUNDLE_ONLY_REQUIREMENTS",
    "LocalPythonBundling",
    "assemble_bundle",
    "install_dependencies",
    "lambda_code",
    "lambda_requirements",
]

SDK_DIR = PACKAGE_DIR.parent  # the elsai package, wherever it is installed


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "elsai" / "lambda-deps"


CACHE_DIR = _default_cache_dir()

PYTHON_VERSION = "3.12"
PLATFORM = "manylinux2014_x86_64"
CACHE_FORMAT = 3  # bump when install/prune logic changes, so stale caches are not reused
_SKIP_NAMES = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
_requirement_name = requirement_name  # kept for callers of the old private name


def cache_key(requirements: Iterable[str], services: Iterable[str] = ("*",)) -> str:
    """Stable key for the pip output: requirements (or lock lines) + platform + kept services."""
    blob = json.dumps(
        {
            "reqs": sorted(requirements),
            "platform": PLATFORM,
            "python": PYTHON_VERSION,
            "format": CACHE_FORMAT,
            "services": sorted(services),
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _pip_command(target: Path, requirements: list[str] | None, lock: Path) -> list[str]:
    cmd = [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--platform", PLATFORM, "--implementation", "cp",
        "--python-version", PYTHON_VERSION, "--only-binary=:all:",
        "--no-compile",  # .pyc for this interpreter would be useless on 3.12
        "--target", str(target),
    ]  # fmt: skip
    if requirements is None:  # the lock pins every distribution: nothing is resolved here
        return [*cmd, "--require-hashes", "--no-deps", "-r", str(lock)]
    return [*cmd, *requirements]


def install_dependencies(
    requirements: list[str] | None = None,
    cache_dir: Path = CACHE_DIR,
    *,
    lock: Path = LOCK_FILE,
    services: Sequence[str] | None = None,
) -> Path:
    """pip-install the lock (or an explicit, unlocked ``requirements`` list) once; return the dir.

    ``services``: the botocore service models to keep (default: pyproject.toml's list).
    """
    services = tuple(sorted(set(services))) if services is not None else botocore_services()
    if requirements is None:
        _check_lock_is_current(lock)
    lines = lock.read_text().splitlines() if requirements is None else requirements
    target = cache_dir / cache_key(lines, services)
    if (target / ".complete").exists():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    # Build in a sibling temp dir and rename: concurrent test workers never see half a tree.
    staging = Path(tempfile.mkdtemp(prefix="deps-", dir=cache_dir))
    try:
        subprocess.run(
            _pip_command(staging, requirements, lock), check=True, capture_output=True, text=True
        )
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise RuntimeError(f"pip failed for the Lambda bundle:\n{exc.stderr}") from exc
    _prune(staging, services)
    (staging / ".complete").write_text("\n".join(lines) + "\n")
    try:
        staging.rename(target)
    except OSError:  # another process won the race; its copy is identical
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _check_lock_is_current(lock: Path) -> None:
    """Refuse a lock that no longer satisfies pyproject.toml (a dependency changed, no relock).

    Also what keeps a user's own lock (``DurableAgentService(lock=...)``) honest: it must pin
    everything elsai's handlers need.
    """
    stale = unsatisfied(lambda_requirements(), locked_versions(lock))
    if not stale:
        return
    raise RuntimeError(
        f"{lock} does not pin what elsai needs: {', '.join(stale)}. Compile your own lock from "
        "`python -m elsai.cdk.lock requirements` plus your packages (in elsai's own repository: "
        "`make lock`, and commit the result)."
    )


def _prune(target: Path, services: tuple[str, ...]) -> None:
    """Drop console scripts and the botocore service models outside ``services``."""
    shutil.rmtree(target / "bin", ignore_errors=True)
    data = target / "botocore" / "data"
    if "*" in services or not data.is_dir():
        return
    models = {p.name for p in data.iterdir() if p.is_dir()}
    unknown = sorted(set(services) - models)
    if unknown:
        raise ValueError(
            f"[tool.elsai.lambda-bundle] botocore-services names unknown services {unknown}"
        )
    for name in models - set(services):
        shutil.rmtree(data / name)


def _ignore(_dir: str, names: list[str]) -> set[str]:
    return {n for n in names if n in _SKIP_NAMES or n.endswith((".pyc", ".pyo"))}


def _ignore_handlers(where: str, names: list[str]) -> set[str]:
    """Like ``_ignore``; the handler package's lock and docs stay out of the bundle."""
    skipped = _ignore(where, names)
    if Path(where).resolve() == HANDLERS_DIR:
        skipped |= {n for n in names if n.endswith((".txt", ".md"))}
    return skipped


def _ignore_sdk(where: str, names: list[str]) -> set[str]:
    """Like ``_ignore``, and without ``elsai/cdk`` and ``elsai/local``.

    A function never synthesizes anything nor runs the local runtime: neither belongs in the
    bundle its cold start loads.
    """
    skipped = _ignore(where, names)
    if Path(where).resolve() == SDK_DIR.resolve():
        skipped |= {"cdk", "local"}
    return skipped


def _copy_user_code(code: Sequence[Path], output_dir: Path) -> None:
    """Each path goes to the bundle root under its own name; a clash with the bundle is refused."""
    for src in code:
        src = Path(src)
        if not (src.is_dir() or (src.is_file() and src.suffix == ".py")):
            raise ValueError(f"agent code {src} is neither a directory nor a .py file")
        dest = output_dir / src.name
        if dest.exists():
            raise ValueError(
                f"agent code {src} would replace {src.name!r} in the Lambda bundle "
                "(a handler, elsai or a dependency of the same name): rename it"
            )
        if src.is_dir():
            shutil.copytree(src, dest, ignore=_ignore)
        else:
            shutil.copy2(src, dest)


def assemble_bundle(
    output_dir: Path,
    requirements: list[str] | None = None,
    *,
    code: Sequence[Path] = (),
    services: Sequence[str] | None = None,
    modules: Sequence[str] = (),
    lock: Path = LOCK_FILE,
    factory: str | None = None,
) -> None:
    """Write the full Lambda bundle into ``output_dir`` (deps first, code on top, then .pyc).

    Without ``requirements`` the dependencies are exactly the lock's. ``code``: the user's agent
    packages or modules, placed at the bundle root next to the handlers; ``modules``: what else
    a slice imports (the user's factory module), precompiled like the handlers' imports;
    ``lock``: a hashed lock with the user's own extra packages (default: elsai's);
    ``factory``: the agent factory, warmed up while listing what a SnapStart init imports.
    """
    deps = install_dependencies(requirements, services=services, lock=lock)
    shutil.copytree(deps, output_dir, dirs_exist_ok=True, ignore=_ignore)
    (output_dir / ".complete").unlink(missing_ok=True)
    shutil.copytree(
        HANDLERS_DIR, output_dir / HANDLERS_PACKAGE, dirs_exist_ok=True, ignore=_ignore_handlers
    )
    shutil.copytree(SDK_DIR, output_dir / "elsai", dirs_exist_ok=True, ignore=_ignore_sdk)
    _copy_user_code(code, output_dir)
    entries = [m for m in HANDLER_MODULES.values() if _in_bundle(output_dir, m)]
    entries += [m for m in LAZY_MODULES if (output_dir / m.split(".")[0]).is_dir()]
    # cp312 bytecode for what the init phase imports
    precompile_init_imports(
        output_dir, entries + [m for m in modules if m not in entries], factory=factory
    )


def _in_bundle(bundle: Path, module: str) -> bool:
    return (bundle / (module.replace(".", "/") + ".py")).is_file()


@jsii.implements(cdk.ILocalBundling)
class LocalPythonBundling:
    """CDK local bundling: runs on the synth machine, so no Docker is needed."""

    def __init__(
        self,
        requirements: list[str] | None = None,
        *,
        code: Sequence[Path] = (),
        services: Sequence[str] | None = None,
        modules: Sequence[str] = (),
        lock: Path = LOCK_FILE,
        factory: str | None = None,
    ) -> None:
        self._factory = factory
        self._requirements = requirements
        self._code = tuple(code)
        self._services = services
        self._modules = tuple(modules)
        self._lock = lock

    def try_bundle(self, output_dir: str, *, image: cdk.DockerImage, **_kwargs: object) -> bool:
        """Build the bundle into CDK's asset directory; never asks for Docker."""
        assemble_bundle(
            Path(output_dir),
            self._requirements,
            code=self._code,
            services=self._services,
            modules=self._modules,
            lock=self._lock,
            factory=self._factory,
        )
        return True


def lambda_code(
    code: Sequence[Path] = (),
    *,
    botocore_services: Sequence[str] | None = None,
    modules: Sequence[str] = (),
    lock: Path = LOCK_FILE,
    factory: str | None = None,
) -> lambda_.Code:
    """One asset for every function in the stack (CDK uploads it once).

    The asset hash is taken from the bundle output, because the source path alone
    (the handler package) would miss edits to ``elsai/``, to the user's ``code`` and to the lock.
    """
    return lambda_.Code.from_asset(
        str(HANDLERS_DIR),
        asset_hash_type=cdk.AssetHashType.OUTPUT,
        bundling=cdk.BundlingOptions(
            # Never pulled: local bundling always succeeds or raises.
            image=lambda_.Runtime.PYTHON_3_12.bundling_image,
            local=LocalPythonBundling(
                code=code,
                services=botocore_services,
                modules=modules,
                lock=lock,
                factory=factory,
            ),
        ),
    )
