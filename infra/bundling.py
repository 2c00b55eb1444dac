"""Docker-free packaging of the Lambda bundle.

The bundle is ``lambdas/*.py`` + the ``elsai`` package + the runtime dependencies,
installed by pip for the Lambda platform (manylinux x86_64, CPython 3.12) rather than
for this machine, so pydantic-core's compiled wheel matches the Lambda runtime. boto3
is left out: the Lambda runtime provides it.

Tests synthesize the stack often, so the pip output is cached under
``build/lambda-deps/<key>/`` where the key hashes the requirement list and target
platform; a re-run only copies files.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterable
from pathlib import Path

import aws_cdk as cdk
import jsii
from aws_cdk import aws_lambda as lambda_

REPO_ROOT = Path(__file__).resolve().parent.parent
LAMBDAS_DIR = REPO_ROOT / "lambdas"
SDK_DIR = REPO_ROOT / "elsai"
CACHE_DIR = REPO_ROOT / "build" / "lambda-deps"

PYTHON_VERSION = "3.12"
PLATFORM = "manylinux2014_x86_64"
# Provided by the Lambda runtime; bundling them would only add ~20 MB.
RUNTIME_PROVIDED = frozenset({"boto3", "botocore", "s3transfer"})
# ...and their dependencies, which the runtime ships too. Pruned from the pip output when
# some requirement pulls them in transitively (aws-xray-sdk depends on botocore): a
# bundled botocore would shadow the runtime's and could mismatch its boto3.
RUNTIME_PROVIDED_DISTS = ("boto3", "botocore", "s3transfer", "urllib3", "python_dateutil", "six")
RUNTIME_PROVIDED_MODULES = ("boto3", "botocore", "s3transfer", "urllib3", "dateutil", "six.py")
# Imported by the handlers but in no pyproject extra: Powertools' Tracer imports
# aws_xray_sdk (the powertools `tracer` extra), which the Lambda runtime does not have.
BUNDLE_ONLY_REQUIREMENTS = ("aws-xray-sdk>=2.8",)
CACHE_FORMAT = 2  # bump when install/prune logic changes, so stale caches are not reused
_SKIP_NAMES = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}


def _requirement_name(req: str) -> str:
    """Distribution name of a PEP 508 requirement (``"pydantic>=2,<3"`` -> ``pydantic``)."""
    name = req.strip()
    for sep in "<>=!~;[ (":
        name = name.split(sep, 1)[0]
    return name.strip().lower().replace("_", "-")


def lambda_requirements(pyproject: Path = REPO_ROOT / "pyproject.toml") -> list[str]:
    """Runtime deps of the bundle: the SDK's deps + the ``lambda`` extra, minus boto3.

    Read from pyproject.toml so the bundle never drifts from the package metadata;
    an optional ``lambdas/requirements.txt`` adds handler-only deps.
    """
    project = tomllib.loads(pyproject.read_text())["project"]
    reqs: list[str] = list(project.get("dependencies", []))
    reqs += project.get("optional-dependencies", {}).get("lambda", [])
    reqs += BUNDLE_ONLY_REQUIREMENTS
    extra = LAMBDAS_DIR / "requirements.txt"
    if extra.exists():
        for line in extra.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-"):
                reqs.append(line)
    kept = {
        _requirement_name(r): r.strip()
        for r in reqs
        if _requirement_name(r) not in RUNTIME_PROVIDED
    }
    return sorted(kept.values())


def cache_key(requirements: Iterable[str]) -> str:
    """Stable key for the pip output: requirement list + target platform/interpreter."""
    blob = json.dumps(
        {
            "reqs": sorted(requirements),
            "platform": PLATFORM,
            "python": PYTHON_VERSION,
            "format": CACHE_FORMAT,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def install_dependencies(requirements: list[str], cache_dir: Path = CACHE_DIR) -> Path:
    """pip-install ``requirements`` for the Lambda platform once; return the cached dir."""
    target = cache_dir / cache_key(requirements)
    if (target / ".complete").exists():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    # Build in a sibling temp dir and rename: concurrent test workers never see half a tree.
    staging = Path(tempfile.mkdtemp(prefix="deps-", dir=cache_dir))
    cmd = [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--platform", PLATFORM, "--implementation", "cp",
        "--python-version", PYTHON_VERSION, "--only-binary=:all:",
        "--no-compile",  # .pyc for this interpreter would be useless on 3.12
        "--target", str(staging), *requirements,
    ]  # fmt: skip
    try:
        subprocess.run(cmd, check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise RuntimeError(f"pip failed for the Lambda bundle:\n{exc.stderr}") from exc
    _prune_runtime_provided(staging)
    (staging / ".complete").write_text("\n".join(requirements) + "\n")
    try:
        staging.rename(target)
    except OSError:  # another process won the race; its copy is identical
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _prune_runtime_provided(target: Path) -> None:
    """Drop what the Lambda runtime already provides, and console scripts."""
    shutil.rmtree(target / "bin", ignore_errors=True)
    for entry in target.iterdir():
        name = entry.name
        dist = (
            name.endswith(".dist-info") and name.split("-", 1)[0].lower() in RUNTIME_PROVIDED_DISTS
        )
        if dist or name in RUNTIME_PROVIDED_MODULES:
            if entry.is_dir():
                shutil.rmtree(entry)
            else:
                entry.unlink()


def _ignore(_dir: str, names: list[str]) -> set[str]:
    return {n for n in names if n in _SKIP_NAMES or n.endswith((".pyc", ".pyo"))}


def assemble_bundle(output_dir: Path, requirements: list[str] | None = None) -> None:
    """Write the full Lambda bundle into ``output_dir`` (deps first, code on top)."""
    reqs = lambda_requirements() if requirements is None else requirements
    deps = install_dependencies(reqs)
    shutil.copytree(deps, output_dir, dirs_exist_ok=True, ignore=_ignore)
    (output_dir / ".complete").unlink(missing_ok=True)
    # The handlers may not exist yet: copy whatever lambdas/ holds.
    if LAMBDAS_DIR.is_dir():
        for src in sorted(LAMBDAS_DIR.iterdir()):
            if src.is_file() and src.suffix == ".py":
                shutil.copy2(src, output_dir / src.name)
            elif src.is_dir() and src.name not in _SKIP_NAMES and (src / "__init__.py").exists():
                shutil.copytree(src, output_dir / src.name, dirs_exist_ok=True, ignore=_ignore)
    shutil.copytree(SDK_DIR, output_dir / "elsai", dirs_exist_ok=True, ignore=_ignore)


@jsii.implements(cdk.ILocalBundling)
class LocalPythonBundling:
    """CDK local bundling: runs on the synth machine, so no Docker is needed."""

    def __init__(self, requirements: list[str] | None = None) -> None:
        self._requirements = requirements

    def try_bundle(self, output_dir: str, *, image: cdk.DockerImage, **_kwargs: object) -> bool:
        assemble_bundle(Path(output_dir), self._requirements)
        return True


def lambda_code() -> lambda_.Code:
    """One asset for every function in the stack (CDK uploads it once).

    The asset hash is taken from the bundle output, because the source path alone
    (``lambdas/``) would miss edits to ``elsai/`` and to the requirement list.
    """
    return lambda_.Code.from_asset(
        str(LAMBDAS_DIR),
        asset_hash_type=cdk.AssetHashType.OUTPUT,
        bundling=cdk.BundlingOptions(
            # Never pulled: local bundling always succeeds or raises.
            image=lambda_.Runtime.PYTHON_3_12.bundling_image,
            local=LocalPythonBundling(),
        ),
    )
