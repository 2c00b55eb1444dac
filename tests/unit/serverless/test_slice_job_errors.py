"""Errors that end a job without retries, raised by the real slice runner.

- A Bedrock ``AccessDeniedException`` (no model access in a fresh account) becomes
  ``ModelAccessDeniedError`` with the steps to fix it: the real BedrockModel talks HTTP to a
  local endpoint that answers exactly as Bedrock does (403 + ``x-amzn-ErrorType``).
- Interrupts too large for Step Functions' state become ``InterruptPayloadTooLargeError``,
  after the session has stored them (nothing is lost).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel
from elsai.models.bedrock import BedrockModel
from elsai.serverless import SliceRequest, run_slice
from elsai.serverless.errors import (
    MAX_INTERRUPTS_BYTES,
    InterruptPayloadTooLargeError,
    ModelAccessDeniedError,
)
from elsai.session import FileSessionManager
from elsai.tools import ToolContext
from tests.unit.serverless.model_service import ModelService

FIRST_USE = (
    "Model use case details have not been submitted for this account. Fill out the "
    "Anthropic use case details form before using the model."
)


@pytest.fixture
def bedrock_endpoint(
    aws_env: None, model_service: ModelService, monkeypatch: pytest.MonkeyPatch
) -> ModelService:
    """Bedrock's answer to an account without model access: 403 + ``x-amzn-ErrorType``."""
    denied = "AccessDeniedException:http://internal.amazon.com/"
    model_service.answer(403, {"message": FIRST_USE}, {"x-amzn-ErrorType": denied})
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", model_service.url)
    return model_service


def _request(**extra: Any) -> SliceRequest:
    return SliceRequest(job_id="job-1", execution_id="arn:exec:job-1", session_id="s1", **extra)


def test_model_access_denied_is_a_clear_job_error(
    bedrock_endpoint: ModelService, tmp_path: Path
) -> None:
    def factory(config: AgentConfig) -> Agent:
        return Agent(
            model=BedrockModel("us.anthropic.claude-sonnet-4-6", max_retries=3), config=config
        )

    manager = FileSessionManager(session_id="s1", storage_dir=str(tmp_path))
    with pytest.raises(ModelAccessDeniedError) as info:
        run_slice(
            _request(prompt="hello"), session_manager=manager, factory=factory,
            remaining_ms=lambda: 900_000,
        )  # fmt: skip
    message = str(info.value)
    assert "use case details" in message  # Bedrock's own words
    assert "first-use form" in message and "aws-marketplace:Subscribe" in message  # the fix
    assert bedrock_endpoint.calls == 1  # the provider did not retry it either
    assert type(info.value).__name__ == "ModelAccessDeniedError"  # = the Step Functions error


@tool
def ask(ctx: ToolContext) -> str:
    """Ask a human, with a very large reason."""
    return str(ctx.interrupt("review", {"document": "x" * (MAX_INTERRUPTS_BYTES + 10)}))


def _asking_agent(config: AgentConfig) -> Agent:
    call = {"toolUse": {"toolUseId": "t1", "name": "ask", "input": {}}}
    return Agent(
        model=ScriptedModel([{"role": "assistant", "content": [call]}]), tools=[ask], config=config
    )


def test_oversized_interrupts_end_the_job_clearly_and_keep_the_session(tmp_path: Path) -> None:
    manager = FileSessionManager(session_id="s1", storage_dir=str(tmp_path))
    with pytest.raises(InterruptPayloadTooLargeError, match="256 KiB"):
        run_slice(
            _request(prompt="review this"), session_manager=manager, factory=_asking_agent,
            remaining_ms=lambda: 900_000,
        )  # fmt: skip
    # The interrupted turn is stored: the assistant's toolUse is in the session.
    again = FileSessionManager(session_id="s1", storage_dir=str(tmp_path))
    agent = Agent(
        model=ScriptedModel([]),
        tools=[ask],
        config=AgentConfig(agent_id="agent", session_manager=again),
    )
    assert [m["role"] for m in agent.messages] == ["user", "assistant"]
    assert agent.messages[1]["content"][0]["toolUse"]["name"] == "ask"


def test_small_interrupts_pass_and_report_model_calls(tmp_path: Path) -> None:
    @tool
    def small(ctx: ToolContext) -> str:
        """Ask a small question."""
        return str(ctx.interrupt("ok?", {"n": 1}))

    def factory(config: AgentConfig) -> Agent:
        call = {"toolUse": {"toolUseId": "t1", "name": "small", "input": {}}}
        model = ScriptedModel([{"role": "assistant", "content": [call]}])
        return Agent(model=model, tools=[small], config=config)

    manager = FileSessionManager(session_id="s2", storage_dir=str(tmp_path))
    result = run_slice(
        _request(prompt="go"), session_manager=manager, factory=factory,
        remaining_ms=lambda: 900_000,
    )  # fmt: skip
    assert result.status == "interrupted" and len(result.interrupts) == 1
    assert result.model_calls == 1
