"""The orchestrator cursor on S3 (a real moto server over HTTP): same layout, same resume."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.multiagent import GraphBuilder, Swarm
from elsai.session import S3SessionManager
from tests.unit.multiagent.helpers import Crash, handoff, model_of, tool_call


@pytest.fixture
def bucket(s3_bucket: str) -> str:
    return s3_bucket


def s3_agent(
    bucket: str, agent_id: str, responses: list[Any], tools: tuple[Any, ...] = ()
) -> Agent:
    return Agent(
        model=ScriptedModel(responses),
        tools=list(tools),
        config=AgentConfig(
            agent_id=agent_id,
            session_manager=S3SessionManager(
                session_id="job-9", bucket=bucket, prefix="tenants/acme"
            ),
            checkpoint=CheckpointConfig(position="both"),
        ),
    )


def cursor(bucket: str) -> dict[str, Any]:
    body = boto3.client("s3").get_object(
        Bucket=bucket, Key="tenants/acme/session_job-9/multi_agent.json"
    )["Body"]
    return json.loads(body.read())


def test_graph_on_s3_crash_inside_node_2_then_resume(bucket: str) -> None:
    runs: list[str] = []

    @tool
    def publish(note: str) -> str:
        """Publish a note."""
        runs.append(note)
        if len(runs) == 1:
            raise Crash("died inside publish")
        return "published"

    def build(first: list[Any], second: list[Any]) -> Any:
        researcher = s3_agent(bucket, "researcher", first)
        writer = s3_agent(bucket, "writer", second, (publish,))
        builder = GraphBuilder().add_node(researcher, "researcher").add_node(writer, "writer")
        builder.add_edge("researcher", "writer")
        builder.set_session_manager(
            S3SessionManager(session_id="job-9", bucket=bucket, prefix="tenants/acme")
        )
        return builder.build()

    with pytest.raises(Crash):
        build(["note: sunny"], [tool_call("p1", "publish", note="sunny")])("weather")
    assert cursor(bucket)["next_nodes"] == ["writer"]

    graph = build([], ["Done."])
    result = graph("weather")

    assert result.status == "completed" and result.text == "Done."
    assert model_of(graph.nodes["researcher"].executor).calls == 0
    assert result.results["writer"].resumed_from_checkpoint and runs == ["sunny", "sunny"]
    assert cursor(bucket)["status"] == "completed"
    keys = {o["Key"] for o in boto3.client("s3").list_objects_v2(Bucket=bucket)["Contents"]}
    assert "tenants/acme/session_job-9/agents/agent_writer/checkpoint.json" in keys


def test_swarm_on_s3(bucket: str) -> None:
    a = s3_agent(bucket, "a", [handoff("h1", "b", "your turn", {"x": 1})])
    b = s3_agent(bucket, "b", ["b answer"])
    swarm = Swarm(
        [a, b],
        session_manager=S3SessionManager(session_id="job-9", bucket=bucket, prefix="tenants/acme"),
    )
    result = swarm("task")
    assert result.status == "completed" and result.text == "b answer"
    stored = cursor(bucket)
    assert stored["type"] == "swarm" and stored["node_history"] == ["a", "b"]
    assert stored["shared_context"] == {"a": {"x": 1}}
