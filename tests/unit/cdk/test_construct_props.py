"""DurableAgentService's props and packaging: typed knobs, refusals at synth, the wheel's contents.

Construct tests skip the Lambda bundle (``aws:cdk:bundling-stacks: []``): what is checked here is
the wiring; tests/unit/cdk/test_construct_library.py builds a real bundle.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest

from elsai.cdk import DurableAgentService, ElsaiConfig
from elsai.cdk.lock import (
    DEFAULT_BOTOCORE_SERVICES,
    LOCK_FILE,
    botocore_services,
    lambda_requirements,
    requirement_name,
)
from elsai.errors import AgentFactoryError

ROOT = Path(__file__).resolve().parents[3]
NO_BUNDLING = {
    "aws:cdk:bundling-stacks": [],
    "@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy": True,
}
AGENT = """
from elsai import Agent
from elsai.models import ScriptedModel


def build(config):
    return Agent(model=ScriptedModel(["hi"]), config=config)


def broken(config):
    raise RuntimeError("no model configured")
"""


@pytest.fixture()
def user_code(tmp_path: Path) -> Path:
    package = tmp_path / "props_agents"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "main.py").write_text(AGENT)
    return package


def _synth(build: Any) -> dict[str, Any]:
    app = cdk.App(context=NO_BUNDLING)
    stack = cdk.Stack(app, "Props")
    build(stack)
    return dict(app.synth().get_stack_by_name("Props").template)


def _of_type(template: dict[str, Any], type_name: str) -> list[dict[str, Any]]:
    return [r["Properties"] for r in template["Resources"].values() if r["Type"] == type_name]


def test_typed_config_and_shortcuts_reach_the_resources(user_code: Path) -> None:
    config = ElsaiConfig(function_timeout_seconds=300, max_concurrent_slices=3)
    template = _synth(
        lambda stack: DurableAgentService(
            stack,
            "Agents",
            code=user_code,
            factory="props_agents.main:build",
            model_id="amazon.nova-pro-v1:0",
            config=config,
        )  # fmt: skip
    )
    (agent,) = [
        f for f in _of_type(template, "AWS::Lambda::Function")
        if f["Handler"] == "elsai_lambdas.agent_handler.handler"
    ]  # fmt: skip
    assert agent["Timeout"] == 300 and agent["ReservedConcurrentExecutions"] == 3
    env = agent["Environment"]["Variables"]
    assert env["ELSAI_AGENT_FACTORY"] == "props_agents.main:build"
    assert env["ELSAI_MODEL_ID"] == "amazon.nova-pro-v1:0"


def test_context_values_still_configure_the_service(user_code: Path) -> None:
    app = cdk.App(context={**NO_BUNDLING, "functionTimeoutSeconds": "280"})
    stack = cdk.Stack(app, "Ctx")
    service = DurableAgentService(
        stack, "Agents", code=user_code, factory="props_agents.main:build"
    )
    assert service.config.function_timeout_seconds == 280
    assert service.config.agent_factory == "props_agents.main:build"


def test_two_services_in_one_stack_get_their_own_names_and_outputs(user_code: Path) -> None:
    def build(stack: cdk.Stack) -> None:
        for name, prefix in (("Orders", ""), ("Support", "Support")):
            DurableAgentService(
                stack, name, code=user_code, factory="props_agents.main:build", output_prefix=prefix
            )

    template = _synth(build)
    names = sorted(
        m["StateMachineName"] for m in _of_type(template, "AWS::StepFunctions::StateMachine")
    )
    assert names == ["Props-Orders-jobs", "Props-Support-jobs"]
    assert {"ApiUrl", "SupportApiUrl", "StateMachineArn", "SupportStateMachineArn"} <= set(
        template["Outputs"]
    )


def test_attributes_expose_the_resources(user_code: Path) -> None:
    app = cdk.App(context=NO_BUNDLING)
    stack = cdk.Stack(app, "Attrs")
    service = DurableAgentService(
        stack, "Agents", code=user_code, factory="props_agents.main:build"
    )
    assert service.bucket is service.storage.bucket
    assert service.state_machine is service.jobs.state_machine
    assert service.agent_function is service.agent.function
    assert service.api_function is service.api.function
    assert service.sweeper is None and service.sweeper_function is None
    assert cdk.Token.is_unresolved(service.api_url)


def test_a_factory_that_fails_is_refused_at_synth(user_code: Path) -> None:
    app = cdk.App(context=NO_BUNDLING)
    stack = cdk.Stack(app, "Bad")
    with pytest.raises(AgentFactoryError, match="props_agents.main:broken.*no model configured"):
        DurableAgentService(stack, "Agents", code=user_code, factory="props_agents.main:broken")


def test_a_users_lock_without_elsais_requirements_is_refused_at_synth(
    user_code: Path, tmp_path: Path
) -> None:
    own = tmp_path / "lambda-lock.txt"
    own.write_text(re.sub(r"(?m)^boto3==\S+", "boto3==1.34.0", LOCK_FILE.read_text()))
    app = cdk.App(context={"@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy": True})
    stack = cdk.Stack(app, "OwnLock")
    with pytest.raises(
        Exception, match=r"boto3>=1\.35\.69.*python -m elsai\.cdk\.lock requirements"
    ):
        DurableAgentService(
            stack, "Agents", code=user_code, factory="props_agents.main:build", lock=own
        )


def test_missing_code_is_refused(tmp_path: Path) -> None:
    app = cdk.App(context=NO_BUNDLING)
    stack = cdk.Stack(app, "Missing")
    with pytest.raises(ValueError, match="does not exist"):
        DurableAgentService(stack, "Agents", code=tmp_path / "nope", factory="nope.main:build")


def test_user_code_named_like_the_bundle_is_refused(tmp_path: Path) -> None:
    from elsai.cdk.bundling import _copy_user_code

    out = tmp_path / "bundle"
    (out / "elsai").mkdir(parents=True)
    clash = tmp_path / "src" / "elsai"
    clash.mkdir(parents=True)
    with pytest.raises(ValueError, match="would replace 'elsai'"):
        _copy_user_code([clash], out)
    module = tmp_path / "src" / "tool.py"
    module.write_text("X = 1\n")
    _copy_user_code([module], out)
    assert (out / "tool.py").read_text() == "X = 1\n"


def test_default_botocore_services_match_pyproject() -> None:
    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["elsai"]["lambda-bundle"]
    assert tuple(sorted(table["botocore-services"])) == DEFAULT_BOTOCORE_SERVICES
    assert botocore_services(ROOT / "no-such-pyproject.toml") == DEFAULT_BOTOCORE_SERVICES


def test_import_elsai_does_not_load_cdk() -> None:
    probe = (
        "import json, sys; import elsai, elsai.cli, elsai.serverless, elsai.cdk, elsai.cdk.lock; "
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('aws_cdk', 'constructs', 'cdk_nag', 'jsii'))))"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


@pytest.mark.slow
def test_the_wheel_carries_the_sdk_the_handlers_and_the_local_runtime(tmp_path: Path) -> None:
    src = tmp_path / "src"  # a copy: building in the checkout would leave build/ and egg-info
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "LICENSE", "README.md"):  # scripts/dist_check.sh's
        shutil.copy2(ROOT / name, src / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("elsai", "lambdas"):
        shutil.copytree(ROOT / name, src / name, ignore=skip)
    wheels = tmp_path / "wheels"
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(wheels), str(src)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    (wheel,) = wheels.glob("elsai-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in (
        "elsai/cdk/service.py", "elsai/cdk/bundling.py", "elsai/local/runtime.py",
        "elsai_lambdas/agent_handler.py", "elsai_lambdas/api_handler.py",
        "elsai_lambdas/jobs_api/routes/__init__.py", "elsai_lambdas/lock-py312.txt",
        "elsai/agent/__init__.py", "elsai/cli/sessions/__init__.py",
        "elsai/local/default_service.template.json",
    ):  # fmt: skip
        assert expected in names, expected
    assert [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    assert not [n for n in names if n.startswith(("tests/", "infra/", "examples/", "lambdas/"))]
    assert not [n for n in names if "example_" in n or n.endswith("dev.txt")]
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    extras = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "Provides-Extra: cdk" in extras and "Provides-Extra: local" in extras
    assert "Provides-Extra: dev" not in extras  # a dependency group, not a published extra

    # Installed (not a checkout): the handlers import by the module paths the constructs name,
    # and the bundler finds them and the lock inside the installed package.
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
        check=True, capture_output=True,
    )  # fmt: skip
    probe = (
        "import importlib, json, elsai.local, elsai_lambdas\n"
        "from elsai.cdk import lock, bundling\n"
        "from elsai.serverless.contract import HANDLER_MODULES, handler_name\n"
        "mods = {r: importlib.import_module(m).__file__ for r, m in HANDLER_MODULES.items()}\n"
        "print(json.dumps([mods, handler_name('agent'), str(lock.HANDLERS_DIR), str(lock.LOCK_FILE),\n"
        "                  str(bundling.SDK_DIR), elsai.local.__file__, lock.botocore_services()]))"
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert proc.returncode == 0, proc.stderr
    modules, agent_handler, handlers, lock_file, sdk, local, services = json.loads(proc.stdout)
    assert set(modules) == {"agent", "api", "sweeper"}
    assert all(Path(f).is_relative_to(site / "elsai_lambdas") for f in modules.values())
    assert agent_handler == "elsai_lambdas.agent_handler.handler"
    assert Path(handlers) == site / "elsai_lambdas" and Path(lock_file).exists()
    assert Path(sdk) == site / "elsai" and Path(local).is_relative_to(site / "elsai" / "local")
    assert tuple(services) == DEFAULT_BOTOCORE_SERVICES
    # A user compiling their own lock starts from the same requirements as `make lock`.
    printed = subprocess.run(
        [sys.executable, "-m", "elsai.cdk.lock", "requirements"],
        capture_output=True, text=True, cwd=tmp_path, env=env, check=True,
    ).stdout.split()  # fmt: skip
    assert _specs(printed) == _specs(lambda_requirements())


def _specs(requirements: list[str]) -> dict[str, Any]:
    from packaging.requirements import Requirement

    return {
        requirement_name(r): (Requirement(r).specifier, Requirement(r).extras) for r in requirements
    }


def test_the_readme_deploy_recipe_synthesizes_clean(tmp_path: Path) -> None:
    """README "Deploy your own agent", step 3, as written, with the example's agent as my_agents."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Deploy your own agent") :]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    shutil.copytree(ROOT / "examples" / "hello-service" / "hello_agents", tmp_path / "my_agents")
    (tmp_path / "app.py").write_text(block)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "CDK_OUTDIR": str(tmp_path / "out"),  # what the cdk CLI passes to the app
        "CDK_CONTEXT_JSON": json.dumps({"aws:cdk:bundling-stacks": []}),
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
    }
    proc = subprocess.run(
        [sys.executable, "app.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "out" / "validation-report.json").read_text())
    assert [(p["conclusion"], p["violations"]) for p in report["pluginReports"]] == [
        ("success", [])
    ]
    template = json.loads((tmp_path / "out" / "MyAgents.template.json").read_text())
    assert {"ApiUrl", "SessionsBucketName", "StateMachineArn"} <= set(template["Outputs"])
