"""A Graph job's fingerprint: its nodes and edges; a removed node fails the run, naming it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel
from elsai.multiagent import GraphBuilder
from elsai.serverless import node_config
from elsai.serverless.contract import FAILED, JobStepRequest, service_keys
from elsai.serverless.errors import BuildMismatchError
from elsai.serverless.fingerprint import (
    FingerprintRecord,
    differences,
    removed_nodes,
    steps_fingerprint,
)
from elsai.serverless.orchestration import build_steps, plan
from elsai.session import FileSessionManager

V1 = "arn:aws:lambda:us-east-1:123456789012:function:agent:1"
V2 = "arn:aws:lambda:us-east-1:123456789012:function:agent:2"
IDS = {"job_id": "job-1", "execution_id": "arn:exec:job-1", "session_id": "job-1"}


def _factory(nodes: list[str]) -> Any:
    def build(config: AgentConfig) -> Any:
        builder = GraphBuilder()
        for name in nodes:
            agent = Agent(model=ScriptedModel([f"{name} done"]), config=node_config(config, name))
            builder.add_node(agent, name)
        for first, then in zip(nodes, nodes[1:], strict=False):
            builder.add_edge(first, then)
        assert config.session_manager is not None
        return builder.set_session_manager(config.session_manager).build()

    return build


def _plan(tmp_path: Path, nodes: list[str], arn: str | None) -> Any:
    manager = FileSessionManager("job-1", str(tmp_path))
    request = JobStepRequest(**IDS, prompt="go", agent_function=arn)
    steps = build_steps(request, session_manager=manager, factory=_factory(nodes))
    return plan(request, steps, manager.storage), manager


def _record(manager: FileSessionManager) -> FingerprintRecord:
    stored = manager.storage.read(service_keys.job_fingerprint_key("job-1"))
    assert stored is not None
    return FingerprintRecord.model_validate_json(stored.data)


def test_the_first_plan_records_the_node_set_and_edges(tmp_path: Path) -> None:
    result, manager = _plan(tmp_path, ["a", "b"], V1)
    assert result.status == "run" and [n["node"] for n in result.nodes] == ["a"]
    shape = _record(manager).fingerprint
    assert (shape.nodes, shape.edges, shape.model_id) == (["a", "b"], ["a -> b"], "graph")
    assert set(shape.tools) == set()  # the nodes have no tools; each node's prompt is digested


def test_a_pinned_job_whose_graph_changed_is_a_build_mismatch_naming_the_node(
    tmp_path: Path,
) -> None:
    _plan(tmp_path, ["a", "b"], V1)
    with pytest.raises(BuildMismatchError, match="node `b` removed; edge `a -> b` removed"):
        _plan(tmp_path, ["a"], V1)


def test_an_upgrade_that_removes_a_node_fails_the_run_naming_it(tmp_path: Path) -> None:
    _plan(tmp_path, ["a", "b"], V1)
    result, manager = _plan(tmp_path, ["a"], V2)
    assert result.status == FAILED
    assert "removed node(s) 'b' from the graph" in result.error and "['a']" in result.error
    assert _record(manager).changes == ["node `b` removed", "edge `a -> b` removed"]


def test_an_upgrade_that_adds_a_node_plans_normally(tmp_path: Path) -> None:
    _plan(tmp_path, ["a", "b"], V1)
    result, manager = _plan(tmp_path, ["a", "b", "c"], V2)
    assert result.status == "run" and [n["node"] for n in result.nodes] == ["a"]
    assert _record(manager).changes == ["node `c` added", "edge `b -> c` added"]


def test_a_job_without_a_pinned_function_records_nothing(tmp_path: Path) -> None:
    result, manager = _plan(tmp_path, ["a"], None)
    assert result.status == "run"
    assert manager.storage.read(service_keys.job_fingerprint_key("job-1")) is None


def test_removed_nodes_reads_only_node_removals() -> None:
    changes = ["tool `a.x` removed", "node `b` removed", "node `c` added", "edge `a -> b` removed"]
    assert removed_nodes(changes) == ["b"]


def test_a_nodes_prompt_change_shows_in_the_fingerprint(tmp_path: Path) -> None:
    manager = FileSessionManager("job-1", str(tmp_path))
    request = JobStepRequest(**IDS, prompt="go", agent_function=V1)
    one = steps_fingerprint(
        build_steps(request, session_manager=manager, factory=_factory(["a"])), V1
    )
    two = steps_fingerprint(
        build_steps(request, session_manager=manager, factory=_factory(["a"])), V1
    )
    assert one == two and one.code_version == "1"


def test_a_nodes_changed_prompt_is_named(tmp_path: Path) -> None:
    manager = FileSessionManager("job-1", str(tmp_path))
    request = JobStepRequest(**IDS, prompt="go", agent_function=V1)
    steps = build_steps(request, session_manager=manager, factory=_factory(["a", "b"]))
    old = steps_fingerprint(steps, V1)
    new = old.model_copy(update={"node_builds": {**old.node_builds, "b": "other"}})
    assert differences(old, new) == ["node `b` prompt or model changed"]
