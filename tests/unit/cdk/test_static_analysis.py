"""Static analysis of the synthesized template: cfn-lint reports nothing.

cfn-lint does not look inside a definition that CDK writes as ``Fn::Join``, so it is also
run on a copy with the definition inlined. There its one finding is E3601 for ``OutputPath``
on the Succeed state ``Completed``, which the ASL specification allows (Succeed states may
have InputPath and OutputPath): a gap in the linter's schema, pinned here so that anything
else it finds fails. checkov runs in its own venv (``make checkov``, skips in
``infra/checkov_skips.txt``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from elsai.local.definition import state_machine_definition, state_machine_logical_id
from infra.synth import synth_template

REPO_ROOT = Path(__file__).resolve().parents[3]


def _cfn_lint(template: dict[str, Any], path: Path) -> list[dict[str, Any]]:
    path.write_text(json.dumps(template))
    run = subprocess.run(
        [str(Path(sys.executable).with_name("cfn-lint")), "--format", "json", str(path)],
        cwd=REPO_ROOT,  # picks up .cfnlintrc.yaml
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode in (0, 2, 4, 6, 8, 10, 12, 14), run.stderr  # 1 = crashed
    return list(json.loads(run.stdout or "[]"))


@pytest.fixture(scope="module")
def full_template() -> dict[str, Any]:
    """Every optional part on: sweeper, model-call budget, reserved concurrency."""
    return synth_template(
        {"sessionRetentionDays": 30, "maxModelCalls": 100, "maxConcurrentSlices": 5}
    )


def test_cfn_lint_finds_nothing(
    template_dict: dict[str, Any], full_template: dict[str, Any], tmp_path: Path
) -> None:
    assert _cfn_lint(template_dict, tmp_path / "default.json") == []
    assert _cfn_lint(full_template, tmp_path / "full.json") == []


def test_cfn_lint_on_the_inlined_definition_only_reports_the_succeed_gap(
    full_template: dict[str, Any], tmp_path: Path
) -> None:
    template = json.loads(json.dumps(full_template))
    arn = "arn:aws:lambda:us-east-1:123456789012:function:agent"
    props = template["Resources"][state_machine_logical_id(template)]["Properties"]
    props["Definition"] = state_machine_definition(template, {"AgentFunction": arn})
    del props["DefinitionString"]
    found = _cfn_lint(template, tmp_path / "inlined.json")
    assert [f["Rule"]["Id"] for f in found] == ["E3601"]
    assert "'OutputPath' was unexpected" in found[0]["Message"]
    assert props["Definition"]["States"]["Completed"]["Type"] == "Succeed"
