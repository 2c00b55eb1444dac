"""What the Lambda bundle is built from: the requirement list (input) and the hashed lock (output).

The requirements come from ``pyproject.toml`` (the SDK's dependencies, the ``lambda`` extra) plus
what only the handlers import; ``make lock`` resolves them once for the Lambda platform (CPython
3.12, manylinux2014 x86_64) into ``LOCK_FILE`` (``lambdas/lock-py312.txt`` in a checkout, shipped
in the handler package) with hashes, and bundling installs exactly that file. So two synths of the
same commit ship the same bytes, and an upstream release changes nothing until someone refreshes
the lock.

``python -m elsai.cdk.lock requirements`` prints the input for ``uv pip compile``, ``... path`` the
lock's path (where ``make lock`` writes it). No CDK import here: the lock tooling and its tests
stay fast.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from pathlib import Path

from elsai.serverless.contract import HANDLERS_PACKAGE, LAMBDA_LOCK_NAME


def _handlers_dir() -> Path:
    """Where the installed handler package lives (without importing it: it loads Powertools)."""
    spec = importlib.util.find_spec(HANDLERS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"the {HANDLERS_PACKAGE} package is not installed (pip install elsai)")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


PACKAGE_DIR = Path(__file__).resolve().parent  # elsai/cdk
# The handlers are one installed package (source: this repository's lambdas/), found the same
# way in a checkout's editable install and in a wheel; the bundle's lock ships inside it.
HANDLERS_DIR = _handlers_dir()
LOCK_FILE = HANDLERS_DIR / LAMBDA_LOCK_NAME
# The botocore service models kept when the project has no [tool.elsai.lambda-bundle] table;
# tests/unit/cdk pins this to this repository's pyproject.toml list.
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


def lambda_requirements() -> list[str]:
    """The bundle's direct requirements: the SDK's deps (boto3 included) + the ``lambda`` extra.

    Read from the installed elsai's metadata (a checkout's editable install carries the same as
    a wheel), so the bundle never drifts from the package; an optional ``requirements.txt`` in
    the handler package adds handler-only deps. One entry per distribution.
    """
    reqs = _installed_requirements() + list(BUNDLE_ONLY_REQUIREMENTS)
    extra = HANDLERS_DIR / "requirements.txt"
    if extra.exists():
        for line in extra.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-"):
                reqs.append(line)
    kept = {requirement_name(r): r.strip() for r in reqs}
    return sorted(kept.values())


def _installed_requirements() -> list[str]:
    """The installed elsai's dependencies plus its ``lambda`` extra, from the package metadata."""
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


def botocore_services(pyproject: Path | None = None) -> tuple[str, ...]:
    """Service models kept in the bundled botocore (``("*",)`` keeps all of them).

    From the ``[tool.elsai.lambda-bundle]`` table of the CDK project's ``pyproject.toml`` (the
    directory synth runs in), else elsai's default list.
    """
    path = pyproject or Path.cwd() / "pyproject.toml"
    if not path.exists():
        return DEFAULT_BOTOCORE_SERVICES
    table = tomllib.loads(path.read_text()).get("tool", {}).get("elsai", {})
    if "lambda-bundle" not in table:
        return DEFAULT_BOTOCORE_SERVICES
    services = table["lambda-bundle"].get("botocore-services", ["*"])
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
    """For ``make lock``: ``requirements`` prints the lock's input, one a line; ``path`` the lock."""
    if argv == ["requirements"]:
        print("\n".join(lambda_requirements()))
        return 0
    if argv == ["path"]:
        print(LOCK_FILE)
        return 0
    print("usage: python -m elsai.cdk.lock requirements|path", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
