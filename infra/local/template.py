"""The synthesized template, cached, and what the local runtime reads from it.

Synthesis takes 10-20 s (CDK + cdk-nag), so the template JSON is cached under
`build/local/` keyed by a hash of everything that shapes it (infra/ and elsai/cdk/ sources, lambdas/,
cdk.json). Synthesis runs in a subprocess so the caller never hosts the jsii node process.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

# `aws:cdk:bundling-stacks: []` skips building the Lambda bundle (a pip install for the Lambda
# platform): the local runtime runs the handlers from the checkout, and the state machine
# definition does not depend on the asset. cdk-nag still runs.
_SYNTH = (
    "import json, sys; from infra.synth import synth_template; "
    "json.dump(synth_template({'aws:cdk:bundling-stacks': []}), sys.stdout)"
)


def template_hash(root: Path) -> str:
    digest = hashlib.sha256()
    files = [
        p
        for p in sorted((root / "infra").rglob("*.py"))
        if "local" not in p.relative_to(root / "infra").parts
    ]
    files += sorted((root / "elsai" / "cdk").glob("*.py"))  # the construct library
    files += sorted((root / "lambdas").glob("*.py")) + [root / "cdk.json"]
    for path in files:
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def load_template(root: Path, *, timeout: float = 600) -> dict[str, Any]:
    """The stack template: from the cache, else synthesized once and cached atomically."""
    cache = root / "build" / "local" / f"template-{template_hash(root)}.json"
    if cache.exists():
        return dict(json.loads(cache.read_text()))
    env = {**os.environ, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    proc = subprocess.run(
        [sys.executable, "-c", _SYNTH],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"cdk synthesis failed:\n{proc.stderr.strip()[-4000:]}")
    template: dict[str, Any] = json.loads(proc.stdout)
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(template))
    tmp.replace(cache)
    return template


def resource(template: dict[str, Any], type_name: str, prefix: str) -> tuple[str, dict[str, Any]]:
    """(logical id, properties) of the one resource of `type_name` whose id starts with `prefix`."""
    found = [
        (k, v.get("Properties", {}))
        for k, v in template["Resources"].items()
        if v["Type"] == type_name and k.startswith(prefix)
    ]
    if len(found) != 1:
        raise ValueError(f"expected one {type_name} named {prefix}*, found {[k for k, _ in found]}")
    return found[0]


def function_environment(
    template: dict[str, Any], prefix: str, refs: dict[str, str]
) -> dict[str, str]:
    """A function's environment variables with `Ref`s resolved through `refs` (logical-id prefix -> value)."""
    _, props = resource(template, "AWS::Lambda::Function", prefix)
    out: dict[str, str] = {}
    for name, value in props.get("Environment", {}).get("Variables", {}).items():
        if isinstance(value, dict) and set(value) == {"Ref"}:
            matches = [v for p, v in refs.items() if value["Ref"].startswith(p)]
            if len(matches) != 1:
                raise ValueError(f"cannot resolve {name}={value} locally")
            value = matches[0]
        out[name] = str(value)
    return out


def fast_retries(definition: dict[str, Any]) -> dict[str, Any]:
    """Same Retry shape, 1 s waits: only the timing knobs change (for tests and quick demos)."""
    definition = copy.deepcopy(definition)
    _shorten_retries(definition)
    return definition


def _shorten_retries(machine: dict[str, Any]) -> None:
    """In place, nested machines too (a Map's ItemProcessor, a Parallel's Branches)."""
    for state in machine["States"].values():
        for retrier in state.get("Retry", []):
            if "IntervalSeconds" in retrier:
                retrier["IntervalSeconds"] = 1
                retrier["BackoffRate"] = 1.0
                retrier["MaxDelaySeconds"] = 1
        for inner in [
            state.get("ItemProcessor"),
            state.get("Iterator"),
            *state.get("Branches", []),
        ]:
            if isinstance(inner, dict) and "States" in inner:
                _shorten_retries(inner)
