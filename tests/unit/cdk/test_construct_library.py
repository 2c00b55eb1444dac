"""elsai as a construct library: examples/hello-service synthesizes with DurableAgentService.

The example is a user's project (its own cdk.json, agent package and factory): it synthesizes
cdk-nag clean with the real Docker-free bundling, provisions what this repository's own stack
does, ships the user's package next to the handlers and elsai (without elsai.cdk), and one job of
its agent runs on the local runtime.
"""

from __future__ import annotations

import collections
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from elsai.local import LocalRuntime
from tests.unit.cdk.test_nag import assert_clean

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "hello-service"
FACTORY = "hello_agents.main:build"


def _load_example_app() -> ModuleType:
    # A unique module name: "app" would collide with other modules of that name.
    spec = importlib.util.spec_from_file_location("hello_service_app", EXAMPLE / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def hello(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    example = _load_example_app()
    outdir = tmp_path_factory.mktemp("hello.cdk.out")
    app = example.build_app(example.cdk_json_context(), outdir=str(outdir))
    assembly = app.synth()  # raises on any unacknowledged cdk-nag finding
    template = dict(assembly.get_stack_by_name("HelloService").template)
    return {"app": app, "template": template, "outdir": outdir}


def _types(template: dict[str, Any]) -> collections.Counter[str]:
    return collections.Counter(r["Type"] for r in template["Resources"].values())


def _agent_env(template: dict[str, Any]) -> dict[str, Any]:
    (env,) = [
        r["Properties"]["Environment"]["Variables"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function"
        and r["Properties"]["Handler"] == "elsai_lambdas.agent_handler.handler"
    ]
    return dict(env)


def test_hello_service_is_nag_clean(hello: dict[str, Any]) -> None:
    assert_clean(Path(hello["outdir"]) / "validation-report.json")


def test_hello_service_provisions_what_this_repos_stack_does(
    hello: dict[str, Any], template_dict: dict[str, Any]
) -> None:
    assert _types(hello["template"]) == _types(template_dict)
    assert _types(hello["template"])["AWS::Lambda::Function"] == 2
    # Fixed output ids: `elsai jobs --stack-name HelloService` reads ApiUrl.
    assert {"ApiUrl", "SessionsBucketName", "StateMachineArn", "AgentFunctionName"} <= set(
        hello["template"]["Outputs"]
    )
    env = _agent_env(hello["template"])
    assert env["ELSAI_AGENT_FACTORY"] == FACTORY
    assert env["ELSAI_MODEL_ID"] == "us.anthropic.claude-sonnet-4-6"
    (machine,) = [
        r["Properties"]
        for r in hello["template"]["Resources"].values()
        if r["Type"] == "AWS::StepFunctions::StateMachine"
    ]
    assert machine["StateMachineName"] == "HelloService-Agents-jobs"


def test_the_bundle_carries_the_users_package_next_to_elsai(hello: dict[str, Any]) -> None:
    assets = [p for p in Path(hello["outdir"]).glob("asset.*") if p.is_dir()]
    assert len(assets) == 1, assets  # one asset shared by every function
    bundle = assets[0]
    for name in (
        "hello_agents/main.py",
        "elsai_lambdas/agent_handler.py",
        "elsai_lambdas/api_handler.py",
        "elsai/agent",
    ):
        assert (bundle / name).exists(), name
    assert not (bundle / "elsai" / "cdk").exists()  # synthesis-only code stays out
    assert not (bundle / "elsai" / "local").exists()  # so does the local runtime
    # The factory module is precompiled for the function's interpreter, like the handlers.
    assert (bundle / "hello_agents" / "__pycache__" / "main.cpython-312.pyc").exists()
    assert not (bundle / "aws_cdk").exists()
    assert not list(bundle.glob("example_*.py"))  # this repository's demos stay in its own stack


def test_one_job_of_the_example_agent_runs_on_its_own_stack_locally() -> None:
    """The example's own app (its cdk.json), its factory and code: nothing of this repository's."""
    with LocalRuntime(project=EXAMPLE, fast_retries=True) as rt:
        assert rt.state_machine_arn.endswith(":HelloService-Agents-jobs")
        job = rt.jobs.start("Please greet Ada")
        final = rt.wait(job.job_id, timeout=90)
    assert final.status == "SUCCEEDED", final
    assert final.result["text"] == "Done: Hello, Ada!"


def test_the_examples_own_test_passes() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=EXAMPLE,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


def test_an_assembly_names_its_service_and_code(hello: dict[str, Any]) -> None:
    """`--cdk-out DIR`: the assembly's metadata gives the construct path, id and code paths."""
    from elsai.local import load_cdk_out

    service = load_cdk_out(hello["outdir"])
    assert (service.service_id, service.path, service.stack_name) == (
        "Agents",
        "HelloService/Agents",
        "HelloService",
    )
    assert service.code == (EXAMPLE / "hello_agents",)
    assert load_cdk_out(hello["outdir"], service="HelloService/Agents") == service
