"""The default service template the wheel ships (``elsai/local/default_service.template.json``).

`elsai local run --agent-factory mod:fn` outside any CDK app runs this service: one
DurableAgentService with elsai's default knobs, so a user can try a factory before writing a
CDK app. It is synthesized here, once, at release time (``make default-template``) rather than
on the user's machine: running it then needs neither aws-cdk-lib (430 MB) nor a 20 s synth.
A test synthesizes it again and fails when the shipped file is stale.

Only what the local runtime reads is kept faithful; the Lambda code location (an asset hash
of elsai's own sources, which would change with every commit) is replaced by a placeholder.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import aws_cdk as cdk

from elsai.cdk.service import DurableAgentService

STACK_NAME = "ElsaiLocal"
#: The factory the template names; `elsai local run --agent-factory` always replaces it.
PLACEHOLDER_FACTORY = "your_agents.main:build"
_CODE_PLACEHOLDER = {"ZipFile": "# elsai local runs the installed handlers; no bundle"}
TARGET = Path(__file__).resolve().parent.parent / "local" / "default_service.template.json"


def default_template() -> dict[str, Any]:
    """Synthesize the default app (no bundling, no factory check) and normalize its template."""
    with tempfile.TemporaryDirectory(prefix="elsai-default-") as outdir:
        app = cdk.App(outdir=outdir, context={"aws:cdk:bundling-stacks": []})
        stack = cdk.Stack(app, STACK_NAME, description="elsai local: the default service")
        DurableAgentService(stack, "Default", factory=PLACEHOLDER_FACTORY, check_factory=False)
        template = dict(app.synth().get_stack_by_name(STACK_NAME).template)
    return normalize(template)


def normalize(template: dict[str, Any]) -> dict[str, Any]:
    """The template without what changes with elsai's sources but means nothing locally."""
    resources = {}
    for logical_id, resource in template["Resources"].items():
        resource = dict(resource)
        resource.pop("Metadata", None)
        if resource["Type"] == "AWS::Lambda::Function":
            resource["Properties"] = {**resource["Properties"], "Code": _CODE_PLACEHOLDER}
        if resource["Type"] != "AWS::CDK::Metadata":
            resources[logical_id] = resource
    keep = {k: v for k, v in template.items() if k in ("Description", "Resources", "Outputs")}
    return {**keep, "Resources": resources}


def render(template: dict[str, Any]) -> str:
    """The file's exact text (sorted keys, so a diff shows only real changes)."""
    return json.dumps(template, indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":  # python -m elsai.cdk.default_app [PATH]
    target: Path = Path(sys.argv[1]) if len(sys.argv) > 1 else TARGET
    target.write_text(render(default_template()))
    print(f"wrote {target}")
