"""Which DurableAgentService of a template or cloud assembly the local runtime runs.

A stack may hold several services; each one's resources carry its logical-id prefix (its
construct path below the stack, ``Default`` left out, as CDK names them), so the service is
found by its state machine (``<prefix>JobsStateMachine<hash>``) and its template is cut down to
the resources of that prefix. A cloud assembly adds the service's construct path and code paths
(the ``elsai:service`` metadata); a bare template has only the logical ids.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elsai.serverless.contract import SERVICE_METADATA

#: DurableAgentService's parts (its child construct ids): the first word after the prefix.
_PARTS = ("Sessions", "Agent", "Jobs", "Api", "Tenant", "Retention")
_MACHINE = re.compile(r"^(?P<prefix>[A-Za-z0-9]*?)JobsStateMachine[0-9A-F]{8}$")
_HOW_TO_ADD = "add `DurableAgentService(stack, ...)` (from elsai.cdk) to the app"


class ProjectError(Exception):
    """The project, template or service asked for cannot be run: the message says how to fix it."""


@dataclass(frozen=True)
class SynthesizedService:
    """One DurableAgentService: its resources' template, its code paths and where it lives."""

    template: dict[str, Any]
    code: tuple[Path, ...]
    stack_name: str
    service_id: str = "Default"
    path: str = ""  # the construct path, e.g. "HelloService/Agents" ("" from a bare template)


def _prefixes(template: dict[str, Any]) -> list[str]:
    """Logical-id prefixes of the services in a template, from their state machines."""
    found = []
    for logical_id, res in template.get("Resources", {}).items():
        match = _MACHINE.match(logical_id)
        if match and res.get("Type") == "AWS::StepFunctions::StateMachine":
            found.append(match["prefix"])
    return sorted(found)


def _owner(logical_id: str, prefixes: list[str]) -> str | None:
    """The (longest) service prefix a resource belongs to, or None for the app's other resources."""
    owners = [
        p for p in prefixes if logical_id.startswith(p) and logical_id[len(p) :].startswith(_PARTS)
    ]
    return max(owners, key=len) if owners else None


def _cut(template: dict[str, Any], prefix: str) -> dict[str, Any]:
    """The template with only the resources of the service with this prefix."""
    prefixes = _prefixes(template)
    resources = {k: v for k, v in template["Resources"].items() if _owner(k, prefixes) == prefix}
    return {**template, "Resources": resources}


def logical_prefix(path: str) -> str:
    """The logical-id prefix CDK gives a construct path below its stack (``Default`` omitted)."""
    return "".join(part for part in path.split("/")[1:] if part and part != "Default")


def services_in_template(template: dict[str, Any], stack_name: str) -> list[SynthesizedService]:
    """Every service of a bare template (no code paths: the caller's --pythonpath supplies them)."""
    return [
        SynthesizedService(_cut(template, p), (), stack_name, p or "Default", "")
        for p in _prefixes(template)
    ]


def services_in_assembly(outdir: Path) -> list[SynthesizedService]:
    """Every service of a cloud assembly (cdk.out), with its construct path and code paths."""
    manifest_file = outdir / "manifest.json"
    if not manifest_file.is_file():
        raise ProjectError(
            f"no manifest.json in {outdir}: pass the directory `cdk synth` wrote (cdk.out)"
        )
    manifest = json.loads(manifest_file.read_text())
    found: list[SynthesizedService] = []
    for name, artifact in manifest.get("artifacts", {}).items():
        if artifact.get("type") != "aws:cloudformation:stack":
            continue
        metadata = dict(artifact.get("metadata", {}))
        if artifact.get("additionalMetadataFile"):  # newer CDK writes it beside the manifest
            metadata.update(json.loads((outdir / artifact["additionalMetadataFile"]).read_text()))
        template = json.loads((outdir / artifact["properties"]["templateFile"]).read_text())
        stack_name = artifact.get("properties", {}).get("stackName") or name
        for key, entries in metadata.items():
            for entry in entries:
                if entry.get("type") != SERVICE_METADATA:
                    continue
                data = entry.get("data") or {}
                path = str(data.get("path") or key.lstrip("/"))
                code = tuple(Path(p) for p in data.get("code", []))
                service_id = str(data.get("id") or path.rsplit("/", 1)[-1])
                found.append(
                    SynthesizedService(
                        _cut(template, logical_prefix(path)), code, stack_name, service_id, path
                    )
                )
    return found


def _label(service: SynthesizedService) -> str:
    return service.path or f"{service.stack_name}/{service.service_id}"


def pick(found: list[SynthesizedService], wanted: str | None, where: str) -> SynthesizedService:
    """The one service ``wanted`` names (construct id, path or stack/id); the only one if None."""
    if wanted is not None:
        chosen = [s for s in found if wanted in (s.service_id, s.path, _label(s))]
        if len(chosen) == 1:
            return chosen[0]
        names = ", ".join(_label(s) for s in found) or "none"
        raise ProjectError(
            f"no single DurableAgentService {wanted!r} in {where} (services: {names}); pass one of them to --service"
        )
    if not found:
        raise ProjectError(
            f"no DurableAgentService in {where}: {_HOW_TO_ADD}, or pass --template/--cdk-out"
        )
    if len(found) > 1:
        names = ", ".join(_label(s) for s in found)
        raise ProjectError(
            f"{len(found)} DurableAgentServices in {where} ({names}): pick one with --service ID"
        )
    return found[0]
