"""The project's synthesized template, cached, and what the local runtime reads from it.

The project is a CDK app directory: its ``cdk.json`` names the app command, which is run the
way the CDK CLI runs it (``CDK_OUTDIR`` and ``CDK_CONTEXT_JSON``), without the CLI and without
building the Lambda bundle (``aws:cdk:bundling-stacks: []``): the local runtime runs the
installed handlers, and the state machine does not depend on the asset. cdk-nag still runs.
Synthesis takes 10-20 s, so the cloud assembly is cached under ``build/elsai-local/`` keyed by
a hash of the project's sources, cdk.json and elsai's own construct library.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from elsai.local.services import (
    ProjectError,
    SynthesizedService,
    pick,
    services_in_assembly,
    services_in_template,
)

__all__ = [
    "ProjectError",
    "SynthesizedService",
    "default_service",
    "load_cdk_out",
    "load_service",
    "load_template",
]

_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "build", "cdk.out", "__pycache__", "tests"}
_HASHED_SUFFIXES = {".py", ".json", ".toml"}


def template_hash(project: Path) -> str:
    """A digest of what shapes the synthesized template: project sources + elsai's constructs."""
    digest = hashlib.sha256()
    cdk_dir = Path(__file__).resolve().parent.parent / "cdk"
    files = [(project, p) for p in _project_files(project)]
    files += [(cdk_dir, p) for p in sorted(cdk_dir.glob("*.py"))]
    for base, path in files:
        digest.update(str(path.relative_to(base)).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(sys.executable.encode())
    return digest.hexdigest()[:16]


def _project_files(project: Path) -> list[Path]:
    found: list[Path] = []
    for root, dirs, files in os.walk(project):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        found += [Path(root) / f for f in sorted(files) if Path(f).suffix in _HASHED_SUFFIXES]
    return found


def load_service(
    project: Path, *, service: str | None = None, timeout: float = 600
) -> SynthesizedService:
    """The project's DurableAgentService (``service`` picks one of several): cached, else synthesized."""
    project = project.resolve()
    if not (project / "cdk.json").is_file():
        raise ProjectError(
            f"no cdk.json in {project}: run from a CDK app's directory, or pass --cdk-out/--template"
        )
    outdir = project / "build" / "elsai-local" / f"cdk.out-{template_hash(project)}"
    if not (outdir / "manifest.json").is_file():
        _synthesize(project, outdir, timeout)
    return pick(services_in_assembly(outdir), service, f"the CDK app of {project / 'cdk.json'}")


def load_cdk_out(outdir: Path, *, service: str | None = None) -> SynthesizedService:
    """A service of a cloud assembly someone already synthesized (``cdk synth`` wrote ``outdir``)."""
    outdir = outdir.resolve()
    return pick(services_in_assembly(outdir), service, str(outdir))


def load_template(path: Path, *, service: str | None = None) -> SynthesizedService:
    """A service of a bare CloudFormation template (no code paths: give ``pythonpath``)."""
    path = path.resolve()
    try:
        template = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ProjectError(
            f"cannot read the template {path} ({exc}): pass a synthesized *.template.json"
        ) from None
    if not isinstance(template, dict) or not isinstance(template.get("Resources"), dict):
        raise ProjectError(
            f"{path} is not a CloudFormation template (no Resources): pass a synthesized *.template.json"
        )
    stack = path.name.removesuffix(".json").removesuffix(".template")
    return pick(services_in_template(template, stack), service, str(path))


#: The template of a lone default service (elsai.cdk.default_app), shipped in the wheel.
DEFAULT_TEMPLATE = Path(__file__).resolve().parent / "default_service.template.json"


def default_service() -> SynthesizedService:
    """The service the wheel ships, for an agent factory outside any CDK app (no synth, no CDK)."""
    return load_template(DEFAULT_TEMPLATE)


def _settings(project: Path) -> tuple[dict[str, Any], str]:
    """cdk.json (and cdk.context.json) as the CLI reads them: the context and the app command."""
    try:
        settings = json.loads((project / "cdk.json").read_text())
        context = dict(settings.get("context", {}))
        user_context = project / "cdk.context.json"
        if user_context.is_file():
            context.update(json.loads(user_context.read_text()))
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise ProjectError(f"cannot read {project / 'cdk.json'} ({exc}): fix its JSON") from None
    if not isinstance(settings.get("app"), str):
        raise ProjectError(
            f'{project / "cdk.json"} names no "app" command: add one, e.g. "python3 app.py"'
        )
    return context, settings["app"]


def _synthesize(project: Path, outdir: Path, timeout: float) -> None:
    """Run the app command of cdk.json into a fresh directory, then move it into place."""
    context, app = _settings(project)
    context["aws:cdk:bundling-stacks"] = []
    staging = outdir.with_name(f"{outdir.name}.{os.getpid()}.tmp")
    staging.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CDK_OUTDIR": str(staging), "CDK_CONTEXT_JSON": json.dumps(context),
           "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}  # fmt: skip
    try:
        proc = subprocess.run(_app_command(app), cwd=project, env=env,
                              capture_output=True, text=True, timeout=timeout)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ProjectError(
            f"synthesizing {project} failed: cdk.json's app {app!r}: {exc}"
        ) from None
    if proc.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        lines = [line for line in proc.stderr.splitlines() if line.strip()] or ["(no output)"]
        raise ProjectError(
            f"synthesizing {project} failed ({app!r} exited {proc.returncode}): {lines[-1].strip()}; "
            "run `cdk synth` there to see the whole error"
        )
    with contextlib.suppress(OSError):  # another process synthesized the same sources first
        staging.rename(outdir)


def _app_command(app: str) -> list[str]:
    """cdk.json's app command; ``python``/``python3`` become this interpreter (elsai's venv)."""
    argv = shlex.split(app)
    if argv and Path(argv[0]).name in ("python", "python3"):
        argv[0] = sys.executable
    return argv


def _names(logical_id: str, part: str) -> bool:
    """Whether ``logical_id`` names the service's ``part`` (after its construct id, if any)."""
    return part in logical_id


def resource(template: dict[str, Any], type_name: str, prefix: str) -> tuple[str, dict[str, Any]]:
    """(logical id, properties) of the one resource of `type_name` that is the service's `prefix`."""
    found = [
        (k, v.get("Properties", {}))
        for k, v in template["Resources"].items()
        if v["Type"] == type_name and _names(k, prefix)
    ]
    if len(found) != 1:
        raise ValueError(f"expected one {type_name} named {prefix}*, found {[k for k, _ in found]}")
    return found[0]


def function_environment(
    template: dict[str, Any], prefix: str, refs: dict[str, str]
) -> dict[str, str]:
    """A function's environment with `Ref`s and ``GetAtt .Arn``s resolved through `refs`.

    `refs` maps a logical-id prefix to the local value (a name for a Ref, an ARN for a GetAtt).
    """
    _, props = resource(template, "AWS::Lambda::Function", prefix)
    out: dict[str, str] = {}
    for name, value in props.get("Environment", {}).get("Variables", {}).items():
        target = _referenced(value)
        if target is not None:
            matches = [v for p, v in refs.items() if _names(target, p)]
            if len(matches) != 1:
                raise ValueError(f"cannot resolve {name}={value} locally")
            value = matches[0]
        out[name] = str(value)
    return out


def _referenced(value: Any) -> str | None:
    """The logical id a ``Ref`` or a ``Fn::GetAtt [id, "Arn"]`` names (None for a plain value)."""
    if not isinstance(value, dict) or len(value) != 1:
        return None
    if set(value) == {"Ref"}:
        return str(value["Ref"])
    arg = value.get("Fn::GetAtt")
    if isinstance(arg, list) and len(arg) == 2 and arg[1] == "Arn":
        return str(arg[0])
    return None


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
