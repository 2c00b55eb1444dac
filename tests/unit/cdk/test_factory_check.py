"""A bad agent factory fails `cdk synth` and is a non-retried runtime error."""

from __future__ import annotations

from pathlib import Path

import pytest

from elsai.cdk.factory_check import check_agent_factory
from elsai.errors import AgentFactoryError
from elsai.serverless import load_factory

FACTORIES = """
from elsai import Agent
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel


def good(config):
    return Agent(model=ScriptedModel(["ok"]), config=config)


def ignores_config(config):
    return Agent(model=ScriptedModel(["ok"]))


def not_an_agent(config):
    return "agent"


def broken(config):
    raise RuntimeError("needs DATABASE_URL")


NOT_CALLABLE = 3
"""


@pytest.fixture
def code_dir(tmp_path: Path) -> Path:
    (tmp_path / "my_agents.py").write_text(FACTORIES)
    return tmp_path


def test_the_default_factory_passes() -> None:
    check_agent_factory("example_agent:build_agent")


def test_a_user_module_outside_lambdas_passes(code_dir: Path) -> None:
    check_agent_factory("my_agents:good", [code_dir])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nocolon", "must look like 'module:function'"),
        ("no_such_module_xyz:build", "cannot import agent factory module 'no_such_module_xyz'"),
        ("my_agents:missing", "is not a callable"),
        ("my_agents:NOT_CALLABLE", "is not a callable"),
        ("my_agents:ignores_config", "keep its session_manager and checkpoint settings"),
        ("my_agents:not_an_agent", "returned str, not an Agent, Graph or Swarm"),
        ("my_agents:broken", "raised RuntimeError when called with a test AgentConfig"),
    ],
)
def test_bad_factories_are_named(code_dir: Path, spec: str, message: str) -> None:
    with pytest.raises(AgentFactoryError, match=message) as caught:
        check_agent_factory(spec, [code_dir])
    assert f"agentFactory {spec!r}" in str(caught.value)


def test_synth_fails_on_a_bad_factory() -> None:
    from infra.app import build_app

    for bad in ("nocolon", "no_such_module_xyz:build"):
        with pytest.raises(AgentFactoryError, match=bad):
            build_app({"agentFactory": bad}, nag=False)


def test_runtime_load_errors_are_agent_factory_errors() -> None:
    with pytest.raises(AgentFactoryError, match="nocolon"):
        load_factory("nocolon")
    with pytest.raises(ValueError):  # still a ValueError for callers that caught that
        load_factory("no_such_module_xyz:build")
