"""Which service `elsai local run` / `elsai jobs serve` run: a template, an assembly, the cwd's app,
or (outside any CDK app, with --agent-factory) the default service the wheel ships.

Every bad input is one line on stderr naming what was looked for and how to fix it, exit 2.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from elsai.local.services import ProjectError, pick, services_in_template
from elsai.local.template import DEFAULT_TEMPLATE, default_service, resource

ROOT = Path(__file__).resolve().parents[3]
HELLO = ROOT / "examples" / "hello-service"
HELLO_FACTORY = ["--agent-factory", "hello_agents.main:build", "--pythonpath", str(HELLO)]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "MOTO_", "ELSAI_"))}
    env.update({"JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20", "NO_COLOR": "1"})
    return env


def _elsai(*args: str, cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "elsai.cli", *args], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=timeout)  # fmt: skip


def _one_line_usage_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("elsai: error: "), proc.stderr
    return lines[0]


def _two_services(tmp_path: Path) -> Path:
    """The default template twice in one stack, as services ``Agents`` and ``Other`` would be."""
    text = DEFAULT_TEMPLATE.read_text()
    template = json.loads(text)
    both: dict[str, dict[str, object]] = {"Resources": {}}
    for prefix in ("Agents", "Other"):
        renamed = text
        for logical_id in template["Resources"]:
            renamed = re.sub(rf'"{logical_id}"', f'"{prefix}{logical_id}"', renamed)
        renamed = renamed.replace('"ElsaiLocal-jobs"', f'"Shop-{prefix}-jobs"')
        both["Resources"].update(json.loads(renamed)["Resources"])
    path = tmp_path / "Shop.template.json"
    path.write_text(json.dumps(both))
    return path


def test_the_shipped_default_service_is_one_whole_service() -> None:
    service = default_service()
    assert service.service_id == "Default" and service.code == ()
    _, machine = resource(service.template, "AWS::StepFunctions::StateMachine", "Jobs")
    assert machine["StateMachineName"] == "ElsaiLocal-jobs"


def test_each_service_of_a_stack_gets_only_its_own_resources(tmp_path: Path) -> None:
    found = services_in_template(json.loads(_two_services(tmp_path).read_text()), "Shop")
    assert [s.service_id for s in found] == ["Agents", "Other"]
    other = pick(found, "Other", "Shop")
    assert all(k.startswith("Other") for k in other.template["Resources"])
    _, machine = resource(other.template, "AWS::StepFunctions::StateMachine", "Jobs")
    assert machine["StateMachineName"] == "Shop-Other-jobs"
    with pytest.raises(
        ProjectError,
        match=r"2 DurableAgentServices in Shop \(Shop/Agents, Shop/Other\): pick one with --service",
    ):
        pick(found, None, "Shop")
    with pytest.raises(ProjectError, match="no single DurableAgentService 'Nope'"):
        pick(found, "Nope", "Shop")


def test_several_services_without_service_is_a_usage_error(tmp_path: Path) -> None:
    template = _two_services(tmp_path)
    line = _one_line_usage_error(
        _elsai(
            "local", "run", "--template", str(template), *HELLO_FACTORY, cwd=tmp_path, timeout=60
        )
    )
    assert "Shop/Agents, Shop/Other" in line and "--service" in line
    line = _one_line_usage_error(
        _elsai("jobs", "serve", "--template", str(template), cwd=tmp_path, timeout=60)
    )
    assert "Shop/Agents, Shop/Other" in line


def test_service_picks_one_of_several_and_runs_it(tmp_path: Path) -> None:
    template = _two_services(tmp_path)
    proc = _elsai("local", "run", "--template", str(template), "--service", "Other", *HELLO_FACTORY,
                  "--no-kill", "--json", "Please greet Ada", cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["status"] == "SUCCEEDED" and summary["text"] == "Done: Hello, Ada!"


@pytest.mark.slow
def test_outside_a_cdk_app_a_factory_runs_in_the_default_service(tmp_path: Path) -> None:
    proc = _elsai(
        "local",
        "run",
        *HELLO_FACTORY,
        "--kill-in-tool",
        "1",
        "--fast-retries",
        "Please greet Ada",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SIGKILLed inside tool call 1" in proc.stdout
    assert "resumed from after_model" in proc.stdout
    assert "execution SUCCEEDED: Done: Hello, Ada!" in proc.stdout


def test_bad_template_and_cdk_out_are_usage_errors(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("[1, 2]")
    line = _one_line_usage_error(
        _elsai("local", "run", "--template", str(tmp_path / "x.json"), cwd=tmp_path, timeout=60)
    )
    assert "is not a CloudFormation template" in line
    line = _one_line_usage_error(
        _elsai("jobs", "serve", "--cdk-out", str(tmp_path), cwd=tmp_path, timeout=60)
    )
    assert f"no manifest.json in {tmp_path}" in line and "cdk synth" in line


def _app(tmp_path: Path, source: str) -> Path:
    project = tmp_path / "app"
    project.mkdir()
    (project / "app.py").write_text(textwrap.dedent(source))
    (project / "cdk.json").write_text(json.dumps({"app": "python3 app.py"}))
    return project


def test_an_app_without_a_service_is_a_usage_error(tmp_path: Path) -> None:
    project = _app(tmp_path, """
        import aws_cdk as cdk
        app = cdk.App()
        cdk.Stack(app, "Empty")
        app.synth()
    """)  # fmt: skip
    line = _one_line_usage_error(_elsai("local", "run", cwd=project))
    assert f"no DurableAgentService in the CDK app of {project / 'cdk.json'}" in line
    assert "DurableAgentService(stack, ...)" in line


def test_a_failing_synth_is_a_usage_error_with_its_last_line(tmp_path: Path) -> None:
    project = _app(tmp_path, """
        raise ValueError("modelId must name a Bedrock model")
    """)  # fmt: skip
    for command in (("local", "run"), ("jobs", "serve")):
        line = _one_line_usage_error(_elsai(*command, cwd=project, timeout=60))
        assert f"synthesizing {project} failed" in line
        assert "ValueError: modelId must name a Bedrock model" in line and "cdk synth" in line
