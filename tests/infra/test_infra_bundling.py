"""Docker-free Lambda bundle: right platform wheels, no boto3, cached, small."""

from __future__ import annotations

import subprocess
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
    for name in ("boto3", "botocore", "s3transfer", "bin"):
        assert not (bundle_dir / name).exists(), name
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
