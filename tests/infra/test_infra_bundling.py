"""Docker-free Lambda bundle: right platform wheels, no boto3, cached, small."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from infra import bundling
from infra.bundle_size import TARGET_MB, report


@pytest.fixture(scope="module")
def bundle_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle")
    bundling.assemble_bundle(out)
    return out


def test_requirements_come_from_pyproject_without_boto3() -> None:
    reqs = bundling.lambda_requirements()
    names = {bundling._requirement_name(r) for r in reqs}
    assert {"pydantic", "aws-lambda-powertools"} <= names
    assert not names & {"boto3", "botocore", "s3transfer"}


def test_cache_key_tracks_the_requirement_list() -> None:
    a = bundling.cache_key(["pydantic>=2", "aws-lambda-powertools"])
    assert a == bundling.cache_key(["aws-lambda-powertools", "pydantic>=2"])
    assert a != bundling.cache_key(["pydantic>=2.1", "aws-lambda-powertools"])


def test_bundle_has_code_and_lambda_platform_wheels(bundle_dir: Path) -> None:
    assert (bundle_dir / "elsai" / "__init__.py").exists()
    assert (bundle_dir / "aws_lambda_powertools").is_dir()
    (core,) = (bundle_dir / "pydantic_core").glob("_pydantic_core*.so")
    assert "cpython-312-x86_64-linux-gnu" in core.name  # built for Lambda, not this host
    assert (bundle_dir / "aws_xray_sdk").is_dir()  # Powertools' Tracer imports it
    for name in (*bundling.RUNTIME_PROVIDED_MODULES, "bin"):
        assert not (bundle_dir / name).exists(), name
    assert not [p for p in bundle_dir.glob("*.dist-info") if p.name.startswith(("boto", "urllib3"))]
    assert not list(bundle_dir.rglob("__pycache__"))
    assert not (bundle_dir / ".complete").exists()
    for handler in bundling.LAMBDAS_DIR.glob("*.py"):
        assert (bundle_dir / handler.name).read_bytes() == handler.read_bytes()


def test_handlers_are_copied_and_missing_ones_are_fine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lambdas = tmp_path / "lambdas"
    (lambdas / "helpers").mkdir(parents=True)
    (lambdas / "agent_handler.py").write_text("def handler(event, context):\n    return {}\n")
    (lambdas / "helpers" / "__init__.py").write_text("")
    (lambdas / "README.md").write_text("not code")
    monkeypatch.setattr(bundling, "LAMBDAS_DIR", lambdas)
    out = tmp_path / "out"
    bundling.assemble_bundle(out)
    assert (out / "agent_handler.py").exists() and (out / "helpers" / "__init__.py").exists()
    assert not (out / "README.md").exists()

    monkeypatch.setattr(bundling, "LAMBDAS_DIR", tmp_path / "absent")
    bundling.assemble_bundle(tmp_path / "out2")  # no handlers yet: still a valid bundle
    assert (tmp_path / "out2" / "elsai").is_dir()


def test_rebundling_reuses_the_pip_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundling.install_dependencies(bundling.lambda_requirements())  # warm (no-op if warm)

    def no_pip(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"pip ran again: {args}")

    monkeypatch.setattr(subprocess, "run", no_pip)
    bundling.assemble_bundle(tmp_path / "again")
    assert (tmp_path / "again" / "pydantic").is_dir()


def test_zipped_bundle_is_under_target(bundle_dir: Path) -> None:
    r = report(bundle_dir)
    print(f"\nLambda bundle: {r['zipped_mb']} MB zipped, {r['unzipped_mb']} MB unzipped")
    assert 0.5 < float(r["zipped_mb"]) <= TARGET_MB


def test_synthesized_asset_is_the_bundle(synthesized: dict[str, Any]) -> None:
    assets = [p for p in Path(synthesized["outdir"]).glob("asset.*") if p.is_dir()]
    assert len(assets) == 1  # one asset shared by both functions
    assert (assets[0] / "elsai" / "__init__.py").exists()
    assert (assets[0] / "pydantic_core").is_dir()


def _python312() -> str | None:
    """A working CPython 3.12 (the Lambda runtime's version), if this machine has one."""
    candidates = [
        shutil.which("python3.12"),
        *sorted(glob.glob("/root/.pyenv/versions/3.12*/bin/python3.12")),
    ]
    for exe in filter(None, candidates):
        probe = subprocess.run(
            [exe, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True
        )
        if probe.returncode == 0 and probe.stdout.strip() == "(3, 12)":
            return exe
    return None


@pytest.mark.slow
def test_bundle_imports_the_handlers_on_python_312(bundle_dir: Path, tmp_path: Path) -> None:
    """The cp312 wheels load and every handler imports, as on the Lambda runtime."""
    exe = _python312()
    if exe is None:
        pytest.skip("no CPython 3.12 on this machine")
    runtime = tmp_path / "runtime"  # stands in for the boto3 the Lambda runtime provides
    pip = [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
           "--platform", bundling.PLATFORM, "--implementation", "cp", "--python-version", "3.12",
           "--only-binary=:all:", "--target", str(runtime), "boto3"]  # fmt: skip
    subprocess.run(pip, check=True, capture_output=True)
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": os.pathsep.join([str(bundle_dir), str(runtime)]),
        "AWS_DEFAULT_REGION": "us-east-1",
        "ELSAI_SESSIONS_BUCKET": "bucket",
        "ELSAI_STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:m",
        "POWERTOOLS_TRACE_DISABLED": "true",
    }
    modules = sorted(p.stem for p in bundle_dir.glob("*.py") if p.stem != "typing_extensions")
    code = "import importlib, sys\n" + "".join(f"importlib.import_module({m!r})\n" for m in modules)
    code += "import pydantic_core, aws_xray_sdk; print(pydantic_core.__file__)"
    proc = subprocess.run([exe, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().startswith(str(bundle_dir))
