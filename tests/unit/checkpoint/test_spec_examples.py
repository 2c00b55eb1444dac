"""The spec's own examples, run as written (with a scripted model), on files and on S3."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import boto3
import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager, S3SessionManager
from tests.support.transcripts import assert_valid_transcript
from tests.unit.checkpoint.helpers import Crash, tool_call


def test_quickstart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    SESSION_ID = "my-job"  # noqa: N806 - as the spec writes it
    AGENT_ID = "worker"  # noqa: N806

    @tool
    def get_weather(city: str) -> str:
        """Return weather for a city."""
        return f"Sunny, 72F in {city}"

    def make(responses: list[Any]) -> Agent:
        return Agent(
            model=ScriptedModel(responses),
            tools=[get_weather],
            config=AgentConfig(
                agent_id=AGENT_ID,
                session_manager=FileSessionManager(session_id=SESSION_ID, storage_dir="./sessions"),
                checkpoint=CheckpointConfig(position="both"),
            ),
        )

    agent = make([tool_call("t1", city="Paris"), "Sunny, 72F in Paris."])
    result = agent("What's the weather in Paris? Use get_weather.")
    assert (result.resumed_from_checkpoint, result.resume_position) == (False, None)
    assert str(result) == "Sunny, 72F in Paris."

    agent = make(["Anything else?"])
    result = agent("continue")
    assert (result.resumed_from_checkpoint, result.resume_position) == (
        False,
        None,
    )  # completed: messages only
    assert len(agent.messages) == 6
    assert (tmp_path / "sessions/session_my-job/agents/agent_worker/checkpoint.json").exists()


def test_crash_recovery_recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    processed: list[str] = []

    @tool
    def process_order(order_id: str) -> str:
        """Process an order by id."""
        processed.append(order_id)
        if len(processed) == 1:
            raise Crash("process death")
        return f"Processed {order_id}"

    def make(responses: list[Any]) -> Agent:
        return Agent(
            model=ScriptedModel(responses),
            tools=[process_order],
            config=AgentConfig(
                agent_id="fulfillment",
                session_manager=FileSessionManager(session_id="order-42", storage_dir="./sessions"),
                checkpoint=CheckpointConfig(position="both"),
            ),
        )

    with pytest.raises(Crash):
        make([tool_call("p1", name="process_order", order_id="42")])("Process this order")
    result = make(["Order 42 processed."])("continue")
    assert result.resumed_from_checkpoint is True and result.resume_position == "after_model"
    assert processed == ["42", "42"]
    assert str(result) == "Order 42 processed."


# -- S3: same layout under the prefix, same semantics ------------------------------------------------


@pytest.fixture
def bucket(s3_bucket: str) -> str:
    return s3_bucket


def test_s3_layout_and_crash_resume_under_prefix(bucket: str) -> None:
    runs: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """Return weather for a city."""
        runs.append(city)
        if len(runs) == 1:
            raise Crash("died")
        return f"Sunny in {city}"

    def make(responses: list[Any]) -> Agent:
        return Agent(
            model=ScriptedModel(responses),
            tools=[get_weather],
            config=AgentConfig(
                agent_id="worker",
                session_manager=S3SessionManager(
                    session_id="job-7", bucket=bucket, prefix="tenants/acme"
                ),
                checkpoint=CheckpointConfig(position="both"),
            ),
        )

    with pytest.raises(Crash):
        make([tool_call("t1", city="Oslo")])("weather in Oslo?")
    result = make(["Sunny in Oslo."])("continue")
    assert (result.resumed_from_checkpoint, result.resume_position) == (True, "after_model")

    s3 = boto3.client("s3")
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"])
    base = "tenants/acme/session_job-7/"
    # the resume is recorded beside the bookmark, one create-only file per resume
    (resume,) = [k for k in keys if k.startswith(base + "agents/agent_worker/resumes/resume_")]
    assert keys == [
        base + "agents/agent_worker/agent.json",
        base + "agents/agent_worker/checkpoint.json",
        base + "agents/agent_worker/lease.json",  # the ownership lease
        *[base + f"agents/agent_worker/messages/message_{i}.json" for i in range(4)],
        resume,
        base + "session.json",
    ]
    bookmark = json.loads(
        s3.get_object(Bucket=bucket, Key=base + "agents/agent_worker/checkpoint.json")[
            "Body"
        ].read()
    )
    assert bookmark["execution_status"] == "completed" and bookmark["message_count"] == 4
    messages = [
        json.loads(
            s3.get_object(
                Bucket=bucket, Key=base + f"agents/agent_worker/messages/message_{i}.json"
            )["Body"].read()
        )["message"]
        for i in range(4)
    ]
    assert_valid_transcript(messages)
    assert os.environ["AWS_ENDPOINT_URL_S3"].startswith("http://127.0.0.1")
