"""The bundle is what the lock says, the lock is what pyproject asks for, the dev install is pinned."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from elsai.cdk import bundling
from elsai.cdk.lock import (
    LOCK_FILE,
    botocore_services,
    lambda_requirements,
    locked_versions,
    normalize,
    unsatisfied,
)
from tests.unit.cdk.bundle.lambda_run import FLOOR, REPO_ROOT

DEV_CONSTRAINTS = REPO_ROOT / "locks" / "dev.txt"

DEV_CONSTRAINTS = REPO_ROOT / "locks" / "dev.txt"


def _installed(site: Path) -> dict[str, str]:
    """``{name: version}`` from the ``*.dist-info`` directories pip left in ``site``."""
    out = {}
    for info in site.glob("*.dist-info"):
        name, version = info.name[: -len(".dist-info")].rsplit("-", 1)
        out[normalize(name)] = version
    return out


def test_the_synthesized_asset_holds_exactly_the_locked_versions(asset_dir: Path) -> None:
    pins = locked_versions()
    assert _installed(asset_dir) == pins
    assert {"boto3", "botocore", "s3transfer", "pydantic-core"} <= set(pins)


def test_the_bundled_botocore_can_make_conditional_writes(asset_dir: Path) -> None:
    """Read the S3 model the bundle ships, as the cold-start check does."""
    from botocore.loaders import Loader

    loader = Loader(extra_search_paths=[str(asset_dir / "botocore" / "data")],
                    include_default_search_paths=False)  # fmt: skip
    model = loader.load_service_model("s3", "service-2")
    members = model["shapes"][model["operations"]["PutObject"]["input"]["shape"]]["members"]
    assert {"IfMatch", "IfNoneMatch"} <= set(members)
    kept = {p.name for p in (asset_dir / "botocore" / "data").iterdir() if p.is_dir()}
    assert kept == set(botocore_services())


def test_the_lock_satisfies_pyproject_and_pins_with_hashes() -> None:
    pins = locked_versions()
    assert unsatisfied(lambda_requirements(), pins) == []
    assert "boto3>=" + FLOOR in lambda_requirements()
    text = LOCK_FILE.read_text()
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2])  # one block per pin
    pinned = [b for b in blocks if "==" in b.split("\n", 1)[0]]
    assert len(pinned) == len(pins)
    assert all("--hash=sha256:" in b for b in pinned)


def test_a_stale_lock_is_refused_before_pip_runs(tmp_path: Path) -> None:
    stale = tmp_path / "lock.txt"
    stale.write_text(re.sub(r"(?m)^boto3==\S+", "boto3==1.34.0", LOCK_FILE.read_text()))
    with pytest.raises(RuntimeError, match=r"does not pin what elsai needs: boto3>=1\.35\.69"):
        bundling.install_dependencies(lock=stale, cache_dir=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_pruning_keeps_the_named_botocore_models_and_refuses_unknown_ones(tmp_path: Path) -> None:
    data = tmp_path / "botocore" / "data"
    for name in ("s3", "ec2", "sts"):
        (data / name).mkdir(parents=True)
    (data / "endpoints.json").write_text("{}")
    with pytest.raises(ValueError, match=r"unknown services \['s4'\]"):
        bundling._prune(tmp_path, ("s3", "s4"))
    assert {p.name for p in data.iterdir()} == {"s3", "ec2", "sts", "endpoints.json"}
    bundling._prune(tmp_path, ("s3", "sts"))
    assert {p.name for p in data.iterdir()} == {"s3", "sts", "endpoints.json"}


def test_the_dev_constraints_pin_every_dev_requirement() -> None:
    """CI installs with ``-c locks/dev.txt``: every dev dependency must be pinned there."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    groups = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["dependency-groups"]
    dev = groups["dev"] + project["dependencies"]
    pins = locked_versions(DEV_CONSTRAINTS)
    assert unsatisfied(dev, pins) == []
    makefile = (REPO_ROOT / "Makefile").read_text()
    assert "-m pip install -q -c $(DEV_LOCK) -e . --group dev" in makefile
    assert "DEV_LOCK := locks/dev.txt" in makefile


def test_the_init_imports_are_precompiled_for_312_and_reproducibly(
    asset_dir: Path, tmp_path: Path
) -> None:
    """cp312 unchecked-hash .pyc for what the handlers import; the same bytes on a rebuild."""
    for module in ("botocore/session", "pydantic/main", "elsai/serverless/runtime_check"):
        src = asset_dir / f"{module}.py"
        pyc = src.parent / "__pycache__" / f"{src.stem}.cpython-312.pyc"
        header = pyc.read_bytes()[:16]
        assert int.from_bytes(header[4:8], "little") == 0b01, module  # hash-based, unchecked
    assert not (asset_dir / "botocore" / "__pycache__" / "stub.cpython-312.pyc").exists()
    again = tmp_path / "again"
    from infra.app import EXAMPLE_CODE  # what this repository's stack bundles as its code

    factory = "example_agent:build_agent"
    bundling.assemble_bundle(again, code=EXAMPLE_CODE, modules=["example_agent"], factory=factory)
    digest = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert digest == {
        p.relative_to(asset_dir): p.read_bytes() for p in asset_dir.rglob("*") if p.is_file()
    }
