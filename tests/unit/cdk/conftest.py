"""Shared fixtures for the infra tests: the stack is synthesized once per session."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
if str(REPO_ROOT) not in sys.path:  # `infra` is a top-level package beside `elsai`
    sys.path.insert(0, str(REPO_ROOT))
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """App + stack + template, synthesized with cdk-nag active (raises on any finding)."""
    from infra.app import build_app

    outdir = tmp_path_factory.mktemp("cdk.out")
    app, stack = build_app(outdir=str(outdir))
    assembly = app.synth()
    template = dict(assembly.get_stack_by_name(stack.stack_name).template)
    return {"app": app, "stack": stack, "template": template, "outdir": outdir}


@pytest.fixture(scope="session")
def template_dict(synthesized: dict[str, Any]) -> dict[str, Any]:
    return synthesized["template"]


@pytest.fixture(scope="session")
def shared_template_dict() -> dict[str, Any]:
    """The explicit opt-out (``tenantIsolation=false``): one trusted caller, the bucket root.

    For the tests about that layout only; everything else checks the default (isolated) stack.
    """
    from infra.synth import synth_template

    return synth_template({"tenantIsolation": "false"})


@pytest.fixture(scope="session")
def template(template_dict: dict[str, Any]) -> Any:
    from aws_cdk.assertions import Template

    return Template.from_json(template_dict)


# Non-default knobs: proves cdk.json/-c context reaches the constructs, and gives the
# moto tests a tiny slice budget and interrupt wait.
CUSTOM_CONTEXT: dict[str, Any] = {
    "maxSlices": 3,
    "maxModelCalls": 4,
    "maxConcurrentSlices": 5,
    "maxParallelNodes": 2,
    "interruptWaitSeconds": 2,
    "functionTimeoutSeconds": "300",  # CLI -c values arrive as strings
    "modelId": "amazon.nova-pro-v1:0",
    "stackName": "ElsaiCustom",
}


@pytest.fixture(scope="session")
def custom_template_dict() -> dict[str, Any]:
    from infra.synth import synth_template

    return synth_template(CUSTOM_CONTEXT)
