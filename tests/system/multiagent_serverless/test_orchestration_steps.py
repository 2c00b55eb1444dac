"""The Lambda-side multi-agent steps in one process, on a file session (no state machine).

The local-runtime tests (test_jobs.py) prove the whole path; these pin the small
contracts of `elsai.serverless.orchestration`: what a factory must build, how a caught Lambda
error becomes the node's cause, and how a node slice reports its deadline.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.errors import AgentFactoryError
from elsai.models import ScriptedModel
from elsai.multiagent import GraphBuilder
from elsai.serverless import node_config
from elsai.serverless.contract import JobStepRequest
from elsai.serverless.contract.node_steps import FoldRequest, NodeSliceRequest
from elsai.serverless.orchestration import (
    build_steps,
    fold,
    plan,
    run_node_slice,
)
from elsai.session import FileSessionManager

IDS = {
    "job_id": "job-1",
    "execution_id": "arn:exec:job-1",
    "session_id": "job-1",
    "agent_id": "graph",
}


def _turn(request: Any) -> dict[str, Any] | str:
    """One echo call, then an answer: decided from the messages, as a rebuilt agent needs."""
    if any("toolResult" in b for m in request.messages for b in m["content"]):
        return "A done"
    use = {"toolUseId": "t1", "name": "echo", "input": {"text": "1"}}
    return {"role": "assistant", "content": [{"toolUse": use}]}


def _factory(own_session: bool = True) -> Any:
    from elsai import tool

    @tool
    def echo(text: str) -> str:
        """Echo.

        Args:
            text: What to echo.
        """
        return text

    def build(config: AgentConfig) -> Any:
        node = node_config(config, "a") if own_session else AgentConfig(agent_id="a")
        agent = Agent(model=ScriptedModel([_turn] * 5), tools=[echo], config=node)
        assert config.session_manager is not None
        return (
            GraphBuilder().add_node(agent, "a").set_session_manager(config.session_manager).build()
        )

    return build


def _manager(tmp_path: Path) -> FileSessionManager:
    return FileSessionManager("job-1", str(tmp_path))


def test_a_factory_that_builds_a_single_agent_is_refused_for_a_step(tmp_path: Path) -> None:
    def single(config: AgentConfig) -> Agent:
        return Agent(model=ScriptedModel(["hi"]), config=config)

    with pytest.raises(AgentFactoryError, match="built a Agent for a multi-agent job step"):
        build_steps(JobStepRequest(**IDS), session_manager=_manager(tmp_path), factory=single)


def test_every_node_must_use_the_job_session(tmp_path: Path) -> None:
    with pytest.raises(AgentFactoryError, match=r"node 'a' must use the job's session"):
        build_steps(
            JobStepRequest(**IDS), session_manager=_manager(tmp_path), factory=_factory(False)
        )


def test_a_caught_lambda_error_becomes_the_node_cause(tmp_path: Path) -> None:
    steps = build_steps(
        JobStepRequest(**IDS), session_manager=_manager(tmp_path), factory=_factory()
    )
    planned = plan(JobStepRequest(**IDS, prompt="go"), steps)
    assert planned.status == "run" and [n["node"] for n in planned.nodes] == ["a"]
    cause = json.dumps({"errorType": "RuntimeError", "errorMessage": "boom", "stackTrace": []})
    error = {"node": "a", "status": "failed", "error": {"Error": "RuntimeError", "Cause": cause}}

    folded = fold(FoldRequest(**IDS, batch=planned.batch, results=[error]), steps)
    assert folded.status == "failed"
    assert folded.error == "node 'a' failed: RuntimeError: boom"
    assert folded.node_status == {"a": "failed"}


def test_a_node_slice_at_its_deadline_continues_and_the_next_slice_finishes(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    steps = build_steps(JobStepRequest(**IDS), session_manager=manager, factory=_factory())
    planned = plan(JobStepRequest(**IDS, prompt="go"), steps)
    request = NodeSliceRequest(**IDS, node="a", started_at=planned.nodes[0]["started_at"])
    steps = build_steps(request, session_manager=manager, factory=_factory())  # loads node a

    first = run_node_slice(request, steps, remaining_ms=lambda: 0, stop_margin_ms=1)
    assert first.status == "continue" and first.stop_reason == "paused"
    request = NodeSliceRequest(**IDS, node="a", slice=1, started_at=planned.nodes[0]["started_at"])
    rebuilt = build_steps(request, session_manager=_manager(tmp_path), factory=_factory())
    # a new Lambda: the node is rebuilt from the session and resumes from its after_model bookmark
    second = run_node_slice(request, rebuilt, remaining_ms=lambda: 10**9, stop_margin_ms=1)
    assert second.status == "completed" and second.resume_position == "after_model"
    assert second.started_at <= second.ended_at

    fold_request = FoldRequest(**IDS, batch=planned.batch, results=[second.model_dump()])
    folded = fold(
        fold_request, build_steps(fold_request, session_manager=manager, factory=_factory())
    )
    assert folded.status == "completed" and folded.node_status == {"a": "completed"}


def test_a_step_loads_only_the_node_agents_it_uses(tmp_path: Path) -> None:
    manager = _manager(tmp_path)
    planned = plan(JobStepRequest(**IDS, prompt="go"), build_steps(
        JobStepRequest(**IDS), session_manager=manager, factory=_factory()))  # fmt: skip
    plan_steps = build_steps(JobStepRequest(**IDS), session_manager=manager, factory=_factory())
    request = NodeSliceRequest(**IDS, node="a", started_at=planned.nodes[0]["started_at"])
    # a plan's orchestrator never loaded node a: running it would act on an unread conversation
    with pytest.raises(RuntimeError, match="'a' was not loaded for this orchestration step"):
        run_node_slice(request, plan_steps, remaining_ms=lambda: 10**9, stop_margin_ms=1)
