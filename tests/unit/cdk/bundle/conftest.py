"""Fixtures for testing the built Lambda bundle as the function runs it.

`asset_dir` is the asset directory `cdk synth` writes (synthesized once per session, with the
real local bundling); `runtime_site(version)` is a "runtime" site-packages holding one boto3 /
botocore release, as a Lambda image would, installed from PyPI once and cached under
`.cache/lambda-runtime/<version>` so later runs download nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from infra.cold_start import find_python312
from tests.unit.cdk.bundle.lambda_run import REPO_ROOT  # noqa: E402

RUNTIME_CACHE = REPO_ROOT / ".cache" / "lambda-runtime"
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

SDK_TOP_LEVEL = ("boto3", "botocore", "s3transfer")


@pytest.fixture(scope="session")
def python312() -> str:
    """CPython 3.12, the function's runtime. Missing is a failure with a clear message, not a skip."""
    try:
        return find_python312()
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def asset_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Lambda asset directory of a real `cdk synth` (local bundling from the lock)."""
    from infra.app import build_app

    outdir = tmp_path_factory.mktemp("cdk.out")
    app, _stack = build_app(outdir=str(outdir))
    app.synth()
    assets = [p for p in outdir.glob("asset.*") if p.is_dir()]
    assert len(assets) == 1, assets  # one asset shared by both functions
    return assets[0]


def _install_runtime(version: str) -> Path:
    target = RUNTIME_CACHE / version
    if (target / ".complete").exists():
        return target
    RUNTIME_CACHE.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{version}-", dir=RUNTIME_CACHE))
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
           "--platform", "manylinux2014_x86_64", "--implementation", "cp", "--python-version",
           "3.12", "--only-binary=:all:", "--target", str(staging),
           f"boto3=={version}", f"botocore=={version}"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        pytest.fail(f"could not install the runtime boto3 {version}:\n{proc.stderr}")
    (staging / ".complete").write_text(version + "\n")
    try:
        staging.rename(target)
    except OSError:  # another worker finished first; its copy is the same
        shutil.rmtree(staging, ignore_errors=True)
    return target


@pytest.fixture(scope="session")
def runtime_site() -> Callable[[str], Path]:
    """`runtime_site("1.35.69")` -> a site-packages dir with exactly that boto3 and botocore."""
    return _install_runtime


@pytest.fixture(scope="session")
def asset_without_sdk(asset_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The asset with boto3/botocore/s3transfer removed, as a user stripping the SDK would."""
    out = tmp_path_factory.mktemp("stripped") / "asset"

    def sdk(where: str, names: list[str]) -> set[str]:
        if Path(where) != asset_dir:  # e.g. aws_xray_sdk/ext/botocore stays
            return set()
        return {n for n in names if n.split("-", 1)[0] in SDK_TOP_LEVEL}

    shutil.copytree(asset_dir, out, ignore=sdk)
    return out
