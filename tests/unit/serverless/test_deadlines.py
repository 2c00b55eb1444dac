"""Deadlines that fit a model call: the slice's stop margin, the default tool timeout, and the
synth-time check of the function timeout.

Time is simulated: `remaining_ms` is a clock the tools advance, so each test knows exactly how
much time is left at each boundary and asserts what the slice did there, never how long it
took.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from botocore.config import Config

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.cdk.config import ElsaiConfig
from elsai.models import BedrockModel, ScriptedModel
from elsai.models.base import ModelRequest
from elsai.serverless import DeadlinePolicy, SliceRequest, run_slice
from elsai.session import FileSessionManager
from elsai.session.layout import keys
from elsai.types import tool_results
from tests.system.serverless.helpers import assert_valid_conversation


class ReadTimeoutScriptedModel(ScriptedModel):
    """A scripted model that declares Bedrock's read timeout, as BedrockModel does."""

    @property
    def read_timeout(self) -> float:
        return 120.0


class Clock:
    """Milliseconds left in the simulated Lambda invocation."""

    def __init__(self, remaining_ms: int) -> None:
        self.left = remaining_ms

    def remaining_ms(self) -> int:
        return self.left


ORDERS = 2


def _turn(request: ModelRequest) -> dict[str, Any] | str:
    """The next step of the job from the conversation so far, as a resumed model would."""
    done = sum(len(tool_results(m)) for m in request.messages)
    if done < ORDERS:
        use = {"toolUseId": f"o{done}", "name": "work", "input": {"order": done}}
        return {"role": "assistant", "content": [{"toolUse": use}]}
    return "all done"


def _slice(
    tmp_path: Path,
    clock: Clock,
    tool_ms: int,
    models: list[ScriptedModel],
    slice_no: int = 0,
    **options: Any,
) -> Any:
    """Run one slice whose `work` tool uses `tool_ms` of the clock; returns its result."""

    @tool
    def work(order: int) -> str:
        """Process one order."""
        clock.left -= tool_ms
        return f"order {order} processed"

    def factory(config: AgentConfig) -> Agent:
        model = ReadTimeoutScriptedModel([_turn] * 10)
        models.append(model)
        return Agent(model=model, tools=[work], config=config)

    # Like the state machine: the prompt goes with slice 0 only.
    request = SliceRequest(
        job_id="job-1",
        execution_id="exec-1",
        session_id="s1",
        prompt="go" if slice_no == 0 else None,
        slice=slice_no,
    )
    manager = FileSessionManager("s1", str(tmp_path))
    return run_slice(
        request,
        session_manager=manager,
        factory=factory,
        remaining_ms=clock.remaining_ms,
        **options,
    )


def test_a_slice_just_above_the_old_margin_stops_instead_of_starting_a_model_call(
    tmp_path: Path,
) -> None:
    # 200 s at the start; the first tool call leaves 61.5 s at the after_tools boundary: more
    # than the old fixed 60 s margin, less than one model call (120 s read timeout) + 30 s.
    models: list[ScriptedModel] = []
    result = _slice(tmp_path, Clock(200_000), 138_500, models)
    assert (result.status, result.stop_reason) == ("continue", "paused")
    assert models[0].calls == 1  # the second model call was never started
    checkpoint = json.loads((tmp_path / keys.checkpoint_key("s1", "agent")).read_bytes())
    assert (checkpoint["position"], checkpoint["execution_status"]) == ("after_tools", "active")

    # The next slice (a fresh invocation with time to spare) resumes and finishes the job.
    done = _slice(tmp_path, Clock(900_000), 1_000, models, slice_no=1)
    assert (done.status, done.resumed_from_checkpoint, done.text) == ("completed", True, "all done")
    messages = FileSessionManager("s1", str(tmp_path)).storage.list("session_s1/")
    assert len([k for k in messages if keys.message_index(k) is not None]) == 6


def test_the_old_fixed_margin_would_have_started_that_model_call(tmp_path: Path) -> None:
    models: list[ScriptedModel] = []
    result = _slice(tmp_path, Clock(200_000), 138_500, models, safety_margin_ms=60_000)
    assert models[0].calls == 2  # started a call with 61.5 s left: the Sandbox.Timedout risk
    assert result.status == "continue"


def test_the_stop_margin_follows_the_models_read_timeout_and_the_tool_timeout() -> None:
    policy = DeadlinePolicy()
    assert policy.stop_margin_ms(BedrockModel()) == 150_000  # max(120, 120) + 30
    assert policy.stop_margin_ms(BedrockModel(read_timeout=300)) == 330_000
    config = Config(read_timeout=200)
    assert policy.stop_margin_ms(BedrockModel(boto_client_config=config)) == 230_000
    assert BedrockModel(boto_client_config=config).read_timeout == 200
    assert policy.stop_margin_ms(ScriptedModel([])) == 150_000  # no declared timeout: 120 s
    assert DeadlinePolicy(tool_timeout_s=400).stop_margin_ms(BedrockModel()) == 430_000
    assert DeadlinePolicy(tool_timeout_s=None, safety_s=10).stop_margin_ms(BedrockModel()) == (
        130_000
    )
    assert DeadlinePolicy(margin_ms=1_000).stop_margin_ms(BedrockModel()) == 1_000


def test_deadline_knobs_come_from_the_environment() -> None:
    policy = DeadlinePolicy.from_env(
        {
            "ELSAI_SLICE_SAFETY_SECONDS": "20",
            "ELSAI_MODEL_READ_TIMEOUT_SECONDS": "90",
            "ELSAI_TOOL_TIMEOUT_SECONDS": "45",
        }
    )
    assert policy == DeadlinePolicy(safety_s=20, model_read_timeout_s=90, tool_timeout_s=45)
    assert policy.stop_margin_ms(ScriptedModel([])) == 110_000
    assert DeadlinePolicy.from_env({}) == DeadlinePolicy()
    assert DeadlinePolicy.from_env({"ELSAI_TOOL_TIMEOUT_SECONDS": "none"}).tool_timeout_s is None
    assert DeadlinePolicy.from_env({"ELSAI_SLICE_SAFETY_MARGIN_MS": "1000"}).margin_ms == 1000
    with pytest.raises(ValueError, match="ELSAI_TOOL_TIMEOUT_SECONDS must be a number"):
        DeadlinePolicy.from_env({"ELSAI_TOOL_TIMEOUT_SECONDS": "soon"})
    with pytest.raises(ValueError, match="ELSAI_SLICE_SAFETY_MARGIN_MS must be a whole number"):
        DeadlinePolicy.from_env({"ELSAI_SLICE_SAFETY_MARGIN_MS": "-5"})


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()  # let the abandoned tool thread end


def test_the_slice_applies_the_default_tool_timeout(
    tmp_path: Path, release: threading.Event
) -> None:
    @tool
    def hang() -> str:
        """Never returns while the test runs."""
        release.wait()
        return "late"

    def factory(config: AgentConfig) -> Agent:
        script: list[Any] = [
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "h", "name": "hang", "input": {}}}]},
            "gave up on hang",
        ]  # fmt: skip
        return Agent(model=ScriptedModel(script), tools=[hang], config=config)

    request = SliceRequest(job_id="job-2", execution_id="exec-2", session_id="s2", prompt="go")
    manager = FileSessionManager("s2", str(tmp_path))
    result = run_slice(
        request,
        session_manager=manager,
        factory=factory,
        remaining_ms=Clock(900_000).remaining_ms,
        deadline=DeadlinePolicy(tool_timeout_s=0.2),
    )
    assert (result.status, result.text) == ("completed", "gave up on hang")
    messages = [json.loads(p.read_bytes())["message"] for p in sorted(
        (tmp_path / keys.messages_prefix("s2", "agent")).glob("message_*.json"),
        key=lambda p: keys.message_index(p.name) or 0,
    )]  # fmt: skip
    assert_valid_conversation(messages)
    answer = messages[2]["content"][0]["toolResult"]
    assert answer["status"] == "error"
    assert answer["content"][0]["text"].startswith("Error: tool 'hang' timed out after 0.2 s")


def test_synth_refuses_a_function_timeout_that_cannot_fit_a_model_call_plus_the_margin() -> None:
    assert ElsaiConfig(function_timeout_seconds=270).function_timeout_seconds == 270
    with pytest.raises(ValueError, match=r"functionTimeoutSeconds=269 .* use at least 270"):
        ElsaiConfig(function_timeout_seconds=269)
    with pytest.raises(ValueError, match="use at least 450"):  # 120 + max(120, 300) + 30
        ElsaiConfig(function_timeout_seconds=300, tool_timeout_seconds=300)
    # Lowering the model's read timeout makes a short function fit.
    short = ElsaiConfig(function_timeout_seconds=120, model_read_timeout_seconds=40,
                        tool_timeout_seconds=30, slice_safety_seconds=10)  # fmt: skip
    assert short.agent_deadline_env == {
        "ELSAI_MODEL_READ_TIMEOUT_SECONDS": "40",
        "ELSAI_TOOL_TIMEOUT_SECONDS": "30",
        "ELSAI_SLICE_SAFETY_SECONDS": "10",
    }


def test_the_deadline_knobs_are_read_from_cdk_context() -> None:
    app = cdk.App(
        context={
            "functionTimeoutSeconds": "200",
            "modelReadTimeoutSeconds": "60",
            "toolTimeoutSeconds": "60",
            "sliceSafetySeconds": "20",
        }
    )
    config = ElsaiConfig.from_node(app.node)
    assert (config.model_read_timeout_seconds, config.tool_timeout_seconds) == (60, 60)
    assert config.slice_safety_seconds == 20
    with pytest.raises(ValueError, match="use at least 140"):
        ElsaiConfig.from_node(cdk.App(context={"functionTimeoutSeconds": "100", "modelReadTimeoutSeconds": "60",
                                               "toolTimeoutSeconds": "60", "sliceSafetySeconds": "20"}).node)  # fmt: skip
