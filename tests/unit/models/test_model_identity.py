"""What every model declares besides `stream`: its id, its read timeout, its error classifier.

The serverless runtime reads these three from the `Model` base class (a job's fingerprint, the
slice's stop margin, fail fast on a refusal), so each provider must give them; a model class
that forgets its id cannot be built.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.errors import (
    ContextWindowOverflowError,
    ModelAccessDeniedError,
    ModelError,
    ModelThrottledError,
)
from elsai.models import (
    AnthropicModel,
    BedrockModel,
    OpenAIModel,
    PositionalScriptedModel,
    ScriptedModel,
)
from elsai.models.base import (
    DEFAULT_READ_TIMEOUT_S,
    Model,
    ModelErrorKind,
    ModelEvent,
    ModelRequest,
)
from elsai.serverless import DeadlinePolicy, SliceRequest, run_slice
from elsai.serverless.fingerprint import fingerprint_of
from elsai.session import FileSessionManager


class Unnamed(Model):
    """A provider that forgot its id."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        raise NotImplementedError
        yield  # pragma: no cover - makes this an async generator


class Gateway(Model):
    """A custom provider whose SDK refuses with `PermissionError` and never reaches `retry`."""

    model_id = "gateway-model"

    @property
    def access_help(self) -> str:
        return "ask the gateway team for a key"

    def classify_error(self, exc: BaseException) -> ModelErrorKind:
        return "access_denied" if isinstance(exc, PermissionError) else super().classify_error(exc)

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        raise PermissionError("gateway: key k-123 may not call gateway-model")
        yield  # pragma: no cover - makes this an async generator


def test_a_model_without_an_id_cannot_be_built() -> None:
    with pytest.raises(TypeError, match="model_id"):
        Unnamed()  # type: ignore[abstract]


def test_every_provider_names_its_model() -> None:
    assert (
        BedrockModel("us.anthropic.claude-sonnet-4-6").model_id == "us.anthropic.claude-sonnet-4-6"
    )
    assert AnthropicModel("claude-x", client_args={"api_key": "k"}).model_id == "claude-x"
    assert OpenAIModel("gpt-x", client_args={"api_key": "k"}).model_id == "gpt-x"
    assert ScriptedModel([]).model_id == "scripted"
    assert PositionalScriptedModel([], model_id="support-v2").model_id == "support-v2"


def test_the_fingerprint_records_the_declared_id() -> None:
    agent = Agent(model=ScriptedModel([], model_id="approver-model"))
    assert fingerprint_of(agent, None).model_id == "approver-model"


def test_read_timeouts_are_what_the_clients_wait() -> None:
    assert ScriptedModel([]).read_timeout is None  # never waits for a service
    assert BedrockModel().read_timeout == DEFAULT_READ_TIMEOUT_S
    assert BedrockModel(boto_client_config=Config(read_timeout=45)).read_timeout == 45
    for provider in (AnthropicModel, OpenAIModel):
        default = provider(client_args={"api_key": "k"})
        assert default.read_timeout == DEFAULT_READ_TIMEOUT_S
        assert default.client.timeout.read == DEFAULT_READ_TIMEOUT_S  # what the SDK client got
        assert provider(client_args={"api_key": "k"}, read_timeout=300).client.timeout.read == 300
        assert provider(client_args={"api_key": "k", "timeout": 30.0}).read_timeout == 30.0
        unbounded = provider(client_args={"api_key": "k", "timeout": None})
        assert unbounded.read_timeout is None  # no limit: the runtime's budget applies
        given = provider(client=default.client)
        assert given.read_timeout == DEFAULT_READ_TIMEOUT_S  # a given client's own setting


def test_the_stop_margin_follows_each_providers_read_timeout() -> None:
    policy = DeadlinePolicy()  # tool timeout 120 s, safety 30 s
    anthropic = AnthropicModel(client_args={"api_key": "k"}, read_timeout=300)
    assert policy.stop_margin_ms(anthropic) == 330_000
    openai = OpenAIModel(client_args={"api_key": "k", "timeout": None})
    assert policy.stop_margin_ms(openai) == 150_000  # no bound declared: the policy's 120 s


def _bedrock_error(code: str, message: str = "no") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message}}, "ConverseStream")


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (_bedrock_error("AccessDeniedException"), "access_denied"),
        (_bedrock_error("ThrottlingException"), "throttled"),
        (_bedrock_error("ServiceUnavailableException"), "transient"),
        (_bedrock_error("ValidationException", "Input is too long for model"), "overflow"),
        (_bedrock_error("ValidationException", "bad tool name"), "other"),
        (ModelThrottledError("scripted"), "throttled"),  # elsai's own, via the base class
    ],
)
def test_bedrock_classifies_its_error_codes(error: BaseException, kind: str) -> None:
    assert BedrockModel().classify_error(error) == kind


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (ModelAccessDeniedError("no"), "access_denied"),
        (ModelThrottledError("slow"), "throttled"),
        (ContextWindowOverflowError("long"), "overflow"),
        (ConnectionResetError("reset"), "transient"),
        (TimeoutError("late"), "transient"),
        (ModelError("other"), "other"),
        (ValueError("bug"), "other"),
    ],
)
def test_the_base_classifier_knows_elsais_errors(error: BaseException, kind: str) -> None:
    assert ScriptedModel([]).classify_error(error) == kind


def _slice(factory: Callable[[AgentConfig], Agent], tmp_path: Path) -> None:
    request = SliceRequest(job_id="job-1", execution_id="arn:exec:job-1", session_id="s1",
                           prompt="hello")  # fmt: skip
    manager = FileSessionManager(session_id="s1", storage_dir=str(tmp_path))
    run_slice(request, session_manager=manager, factory=factory, remaining_ms=lambda: 900_000)


def test_a_custom_models_refusal_ends_the_slice_by_its_own_classifier(tmp_path: Path) -> None:
    def factory(config: AgentConfig) -> Agent:
        return Agent(model=Gateway(), config=config)

    with pytest.raises(ModelAccessDeniedError) as info:
        _slice(factory, tmp_path)
    assert "key k-123 may not call" in str(info.value)
    assert "ask the gateway team for a key" in str(info.value)


def test_a_scripted_refusal_plays_a_refused_model_in_a_slice(tmp_path: Path) -> None:
    def factory(config: AgentConfig) -> Agent:
        return Agent(model=ScriptedModel([ModelAccessDeniedError("denied")]), config=config)

    with pytest.raises(ModelAccessDeniedError, match="denied"):
        _slice(factory, tmp_path)
