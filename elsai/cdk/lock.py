"""What the Lambda bundle is built from: the requirement list (input) and the hashed lock (output).

The requirements come from ``pyproject.toml`` (the SDK's dependencies, the ``lambda`` extra) plus
what only the handlers import; ``make lock`` resolves them once for the Lambda platform (CPython
3.12, manylinux2014 x86_64) into ``locks/lambda-py312.txt`` with hashes, and bundling installs
exactly that file. So two synths of the same commit ship the same bytes, and an upstream release
changes nothing until someone refreshes the lock.

``python -m elsai.cdk.lock requirements`` prints the input for ``uv pip compile``. No CDK import here:
the lock tooling and its tests stay fast.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent  # elsai/cdk
# An installed wheel carries the handlers and the lock inside elsai/cdk (setup.py maps them
# there); a checkout (editable install) has them at the repository root.
INSTALLED = (PACKAGE_DIR / "handlers").is_dir()
REPO_ROOT = PACKAGE_DIR.parent.parent
LAMBDAS_DIR = PACKAGE_DIR / "handlers" if INSTALLED else REPO_ROOT / "lambdas"
PYPROJECT = REPO_ROOT / "pyproject.toml"  # checkout only: an installed wheel has none
LOCK_FILE = (PACKAGE_DIR / "locks" if INSTALLED else REPO_ROOT / "locks") / "lambda-py312.txt"
DEV_CONSTRAINTS = REPO_ROOT / "locks" / "dev.txt"
# The botocore service models kept when no pyproject.toml says otherwise (an installed wheel);
# tests/bundle pins this to pyproject.toml's [tool.elsai.lambda-bundle] list.
DEFAULT_BOTOCORE_SERVICES = ("bedrock-runtime", "s3", "stepfunctions", "sts", "xray")

# Imported by the handlers but in no pyproject extra: Powertools' Tracer imports
# aws_xray_sdk (the powertools `tracer` extra).
BUNDLE_ONLY_REQUIREMENTS = ("aws-xray-sdk>=2.8",)
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)")


def normalize(name: str) -> str:
    """PEP 503 name: ``Typing_Extensions`` and ``typing.extensions`` -> ``typing-extensions``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(req: str) -> str:
    """Distribution name of a PEP 508 requirement (``"pydantic>=2,<3"`` -> ``pydantic``)."""
    name = req.strip()
    for sep in "<>=!~;[ (":
        name = name.split(sep, 1)[0]
    return normalize(name.strip())


def lambda_requirements(pyproject: Path = PYPROJECT) -> list[str]:
    """The bundle's direct requirements: the SDK's deps (boto3 included) + the ``lambda`` extra.

    Read from pyproject.toml so the bundle never drifts from the package metadata (an installed
    wheel has none: its metadata says the same); an optional ``lambdas/requirements.txt`` adds
    handler-only deps. One entry per distribution.
    """
    if pyproject.exists():
        project = tomllib.loads(pyproject.read_text())["project"]
        reqs: list[str] = list(project.get("dependencies", []))
        reqs += project.get("optional-dependencies", {}).get("lambda", [])
    else:
        reqs = _installed_requirements()
    reqs += BUNDLE_ONLY_REQUIREMENTS
    extra = LAMBDAS_DIR / "requirements.txt"
    if extra.exists():
        for line in extra.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-"):
                reqs.append(line)
    kept = {requirement_name(r): r.strip() for r in reqs}
    return sorted(kept.values())


def _installed_requirements() -> list[str]:
    """The installed elsai's dependencies plus its ``lambda`` extra, from the wheel's metadata."""
    from importlib.metadata import requires

    from packaging.requirements import Requirement

    out = []
    for text in requires("elsai") or []:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({"extra": "lambda"}):
            continue
        extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
        out.append(f"{req.name}{extras}{req.specifier}")
    return out


def botocore_services(pyproject: Path = PYPROJECT) -> tuple[str, ...]:
    """Service models kept in the bundled botocore (``("*",)`` keeps all of them)."""
    if not pyproject.exists():
        return DEFAULT_BOTOCORE_SERVICES
    table = tomllib.loads(pyproject.read_text()).get("tool", {}).get("elsai", {})
    services = table.get("lambda-bundle", {}).get("botocore-services", ["*"])
    if not isinstance(services, list) or not all(isinstance(s, str) and s for s in services):
        raise ValueError(
            "[tool.elsai.lambda-bundle] botocore-services must be a list of service names"
        )
    return tuple(sorted(set(services)))


def locked_versions(lock: Path = LOCK_FILE) -> dict[str, str]:
    """``{normalized name: version}`` of every ``name==version`` line in ``lock``."""
    if not lock.exists():
        raise FileNotFoundError(f"{lock} is missing: run `make lock` to create it")
    pins: dict[str, str] = {}
    for line in lock.read_text().splitlines():
        match = _PIN.match(line.strip())
        if match:
            pins[normalize(match.group(1))] = match.group(2)
    if not pins:
        raise ValueError(f"{lock} pins nothing: run `make lock`")
    return pins


def unsatisfied(requirements: list[str], pins: dict[str, str]) -> list[str]:
    """Requirements the lock does not satisfy (missing, or pinned outside the specifier).

    A non-empty answer means pyproject.toml changed since the last ``make lock``.
    """
    from packaging.requirements import Requirement

    bad = []
    for text in requirements:
        req = Requirement(text)
        version = pins.get(normalize(req.name))
        if version is None or not req.specifier.contains(version, prereleases=True):
            bad.append(f"{text} (locked: {version or 'absent'})")
    return bad


def main(argv: list[str]) -> int:
    """``requirements``: print the lock's input, one requirement a line (for ``make lock``)."""
    if argv != ["requirements"]:
        print("usage: python -m elsai.cdk.lock requirements", file=sys.stderr)
        return 2
    print("\n".join(lambda_requirements()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
