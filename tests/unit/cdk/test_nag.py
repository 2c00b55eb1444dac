"""cdk-nag AwsSolutions: active, and zero unacknowledged findings on ElsaiStack."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_s3 as s3

from elsai.cdk.nag import enable_nag

REPO_ROOT = Path(__file__).resolve().parents[3]


def assert_clean(report_path: Path) -> None:
    """No violation of any severity; every finding is in the acknowledged (audit) list."""
    (plugin,) = json.loads(report_path.read_text())["pluginReports"]
    assert plugin["pluginName"] == "AwsSolutions"
    assert plugin["conclusion"] == "success"
    assert plugin["violations"] == []
    suppressed = plugin["suppressedViolations"]
    assert suppressed and all(len(v["reason"]) > 40 for v in suppressed)


def test_stack_synthesizes_with_nag_and_reports_nothing(synthesized: dict[str, Any]) -> None:
    # The session fixture's app.synth() would have raised on any error-level finding;
    # the report must also be free of warnings (every finding acknowledged).
    assert_clean(Path(synthesized["outdir"]) / "validation-report.json")


def test_acknowledgements_all_carry_reasons(synthesized: dict[str, Any]) -> None:
    stack = synthesized["stack"]
    acks: dict[str, str] = {}
    for construct in stack.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == "aws:cdk:acknowledged-rules":
                acks.update({f"{construct.node.path} {k}": v for k, v in entry.data.items()})
    assert len(acks) >= 20
    for rule, reason in acks.items():
        assert " AwsSolutions::AwsSolutions-" in rule
        assert len(reason) > 40, rule


def test_nag_is_active_an_unacknowledged_finding_fails_synth(tmp_path: Path) -> None:
    app = cdk.App(outdir=str(tmp_path))
    stack = cdk.Stack(app, "Throwaway")
    s3.Bucket(stack, "Naked")  # no access logs, no TLS-only policy
    enable_nag(app)
    with pytest.raises(Exception, match="ValidationFailed"):
        app.synth()
    report = json.loads((tmp_path / "validation-report.json").read_text())
    rules = {v["ruleName"] for p in report["pluginReports"] for v in p["violations"]}
    assert {"AwsSolutions-S1", "AwsSolutions-S10"} <= rules


@pytest.mark.slow
def test_cdk_cli_synth(tmp_path: Path) -> None:
    """``npx cdk synth -q`` as CI runs it: offline, no credentials, nag included."""
    cli = REPO_ROOT / "node_modules" / ".bin" / "cdk"
    if shutil.which("npx") is None or not cli.exists():
        pytest.skip("node_modules missing: run `npm ci` first")
    out = tmp_path / "cdk.out"
    # cdk.json runs `python3 -m infra.app`: put this interpreter's venv first on PATH,
    # as `source .venv/bin/activate` would.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {**os.environ, "PATH": path, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    proc = subprocess.run(
        ["npx", "cdk", "synth", "-q", "--no-notices", "--output", str(out)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    template = json.loads((out / "ElsaiStack.template.json").read_text())
    assert any(
        r["Type"] == "AWS::StepFunctions::StateMachine" for r in template["Resources"].values()
    )
    assert_clean(out / "validation-report.json")
