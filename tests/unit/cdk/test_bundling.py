"""Docker-free Lambda bundle: right platform wheels, the locked boto3 included, cached, small."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from elsai.cdk import bundling
from infra.bundle_size import TARGET_MB, report
from infra.cold_start import find_python312


@pytest.fixture(scope="module")
def bundle_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bundle")
    bundling.assemble_bundle(out)
    return out


def test_requirements_come_from_pyproject_with_boto3() -> None:
    """boto3/botocore are bundled: the runtime's may predate PutObject IfMatch."""
    reqs = bundling.lambda_requirements()
    names = {bundling._requirement_name(r) for r in reqs}
    assert {"pydantic", "aws-lambda-powertools", "boto3", "botocore"} <= names


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
    for name in ("boto3", "botocore", "s3transfer"):  # pinned by the lock, shadow the runtime's
        assert (bundle_dir / name / "__init__.py").exists(), name
    assert not (bundle_dir / "bin").exists()
    # Bytecode only for the Lambda's interpreter (elsai/cdk/precompile.py), none for this host's.
    pycs = list(bundle_dir.rglob("*.pyc"))
    assert pycs and all(p.name.endswith(".cpython-312.pyc") for p in pycs)
    assert not (bundle_dir / ".complete").exists()
    for handler in bundling.HANDLERS_DIR.rglob("*.py"):
        copied = bundle_dir / "elsai_lambdas" / handler.relative_to(bundling.HANDLERS_DIR)
        assert copied.read_bytes() == handler.read_bytes()
    assert not (bundle_dir / "elsai_lambdas" / "lock-py312.txt").exists()


def test_the_handler_package_is_copied_whole_without_its_lock_and_docs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    bundling.assemble_bundle(out)
    assert (out / "elsai_lambdas" / "agent_handler.py").exists()
    assert (out / "elsai_lambdas" / "jobs_api" / "routes" / "__init__.py").exists()
    assert not (out / "elsai_lambdas" / "README.md").exists()
    assert not (out / "agent_handler.py").exists()  # one import name, not top-level modules


def test_rebundling_reuses_the_pip_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundling.install_dependencies()  # warm (no-op if warm)

    real_run = subprocess.run

    def no_pip(cmd: list[str], *args: Any, **kwargs: Any) -> Any:
        if "pip" in cmd:  # the 3.12 bytecode step may run; pip may not
            raise AssertionError(f"pip ran again: {cmd}")
        return real_run(cmd, *args, **kwargs)

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


@pytest.mark.slow
def test_bundle_imports_the_handlers_on_python_312(bundle_dir: Path, tmp_path: Path) -> None:
    """The cp312 wheels load and every handler imports, as on the Lambda runtime (no skip)."""
    exe = find_python312()
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(bundle_dir),  # the bundle carries its own boto3 now
        "AWS_DEFAULT_REGION": "us-east-1",
        "ELSAI_SESSIONS_BUCKET": "bucket",
        "ELSAI_STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:m",
        "POWERTOOLS_TRACE_DISABLED": "true",
    }
    modules = sorted(p.stem for p in bundle_dir.glob("*.py") if p.stem != "typing_extensions")
    code = "import importlib, sys\n" + "".join(f"importlib.import_module({m!r})\n" for m in modules)
    code += "import pydantic_core, aws_xray_sdk, botocore; print(pydantic_core.__file__)"
    proc = subprocess.run(
        [exe, "-S", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().startswith(str(bundle_dir))
