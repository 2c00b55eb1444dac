"""Any provider's refusal ends a job at once; its throttling is what the retry layer retries.

Real SDK clients (``anthropic``, ``openai``) talk HTTP to a local server that answers as the
service does (``model_service``). A 403 inside a slice must leave it as ``ModelAccessDeniedError`` (the state
machine's non-retried error) after one request, with the provider's fix; a 429 is classified
"throttled" by the model, retried, and ends as ``ModelThrottledError``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.errors import ModelThrottledError
from elsai.models import AnthropicModel, OpenAIModel
from elsai.models.base import Model, ModelRequest
from elsai.serverless import SliceRequest, run_slice
from elsai.serverless.errors import ModelAccessDeniedError
from elsai.session import FileSessionManager
from tests.unit.models.helpers import collect_until_error
from tests.unit.serverless.model_service import ModelService

HELLO = ModelRequest(messages=[{"role": "user", "content": [{"text": "hello"}]}])

ANTHROPIC_403 = {
    "type": "error",
    "error": {
        "type": "permission_error",
        "message": "Your API key does not have permission to use the specified resource.",
    },
}
ANTHROPIC_429 = {
    "type": "error",
    "error": {
        "type": "rate_limit_error",
        "message": "Number of requests has exceeded your rate limit",
    },
}
OPENAI_403 = {
    "error": {
        "message": "Project `proj_test` does not have access to model `gpt-4o`",
        "type": "invalid_request_error",
        "param": None,
        "code": "model_not_found",
    }
}
OPENAI_429 = {
    "error": {
        "message": "Rate limit reached for gpt-4o in organization org-test on requests per min",
        "type": "requests",
        "param": None,
        "code": "rate_limit_exceeded",
    }
}


def anthropic_model(url: str, **options: Any) -> Model:
    return AnthropicModel("claude-test", client_args={"base_url": url, "api_key": "k"}, **options)


def openai_model(url: str, **options: Any) -> Model:
    return OpenAIModel("gpt-4o", client_args={"base_url": f"{url}/v1", "api_key": "k"}, **options)


PROVIDERS: dict[str, tuple[Callable[..., Model], dict[str, Any], dict[str, Any], str]] = {
    # name: (model, its 403 body, its 429 body, a phrase of its fix)
    "anthropic": (anthropic_model, ANTHROPIC_403, ANTHROPIC_429, "ANTHROPIC_API_KEY"),
    "openai": (openai_model, OPENAI_403, OPENAI_429, "OPENAI_API_KEY"),
}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_403_fails_the_slice_at_once_with_model_access_denied(
    provider: str, model_service: ModelService, tmp_path: Path
) -> None:
    build, refusal, _, fix = PROVIDERS[provider]
    model_service.answer(403, refusal)

    def factory(config: AgentConfig) -> Agent:
        return Agent(model=build(model_service.url, max_retries=3), config=config)

    request = SliceRequest(job_id="job-1", execution_id="arn:exec:job-1", session_id="s1",
                           prompt="hello")  # fmt: skip
    manager = FileSessionManager(session_id="s1", storage_dir=str(tmp_path))
    with pytest.raises(ModelAccessDeniedError) as info:
        run_slice(request, session_manager=manager, factory=factory, remaining_ms=lambda: 900_000)
    message = str(info.value)
    assert refusal["error"]["message"] in message  # the provider's own words
    assert fix in message  # and what to do about it
    assert model_service.calls == 1  # not retried by the provider
    assert type(info.value).__name__ == "ModelAccessDeniedError"  # = the Step Functions error


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
@pytest.mark.parametrize(
    ("status", "kind", "raised", "requests"),
    [
        (403, "access_denied", ModelAccessDeniedError, 1),  # never retried
        (429, "throttled", ModelThrottledError, 3),  # the first try and two retries
    ],
)
def test_the_model_classifies_what_its_sdk_raises(
    provider: str,
    status: int,
    kind: str,
    raised: type[Exception],
    requests: int,
    model_service: ModelService,
) -> None:
    build, refusal, throttle, _ = PROVIDERS[provider]
    model_service.answer(status, refusal if status == 403 else throttle)
    model = build(model_service.url, max_retries=2, initial_backoff=0.0, max_backoff=0.0)
    _, exc = collect_until_error(model, HELLO)
    assert isinstance(exc, raised)
    assert exc.__cause__ is not None and model.classify_error(exc.__cause__) == kind
    assert model_service.calls == requests
