"""Any provider's refusal ends a job at once; its throttling is what the retry layer retries.

Real SDK clients (``anthropic``, ``openai``) talk HTTP to a local server that answers as the
service does. A 403 inside a slice must leave it as ``ModelAccessDeniedError`` (the state
machine's non-retried error) after one request, with the provider's fix; a 429 is classified
"throttled" by the model, retried, and ends as ``ModelThrottledError``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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


class Service:
    """A local HTTP server answering every POST with one status and JSON body, counting them."""

    def __init__(self) -> None:
        self.status, self.body, self.calls = 500, {}, 0
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                service.calls += 1
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                body = json.dumps(service.body).encode()
                self.send_response(service.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, status: int, body: dict[str, Any]) -> None:
        self.status, self.body = status, body


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    served = Service()
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        served.server.shutdown()
        served.server.server_close()


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
    provider: str, service: Service, tmp_path: Path
) -> None:
    build, refusal, _, fix = PROVIDERS[provider]
    service.answer(403, refusal)

    def factory(config: AgentConfig) -> Agent:
        return Agent(model=build(service.url, max_retries=3), config=config)

    request = SliceRequest(job_id="job-1", execution_id="arn:exec:job-1", session_id="s1",
                           prompt="hello")  # fmt: skip
    manager = FileSessionManager(session_id="s1", storage_dir=str(tmp_path))
    with pytest.raises(ModelAccessDeniedError) as info:
        run_slice(request, session_manager=manager, factory=factory, remaining_ms=lambda: 900_000)
    message = str(info.value)
    assert refusal["error"]["message"] in message  # the provider's own words
    assert fix in message  # and what to do about it
    assert service.calls == 1  # not retried by the provider
    assert type(info.value).__name__ == "ModelAccessDeniedError"  # = the Step Functions error


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_403_is_classified_access_denied_and_never_retried(
    provider: str, service: Service
) -> None:
    build, refusal, _, _ = PROVIDERS[provider]
    service.answer(403, refusal)
    model = build(service.url, max_retries=3)
    _, exc = collect_until_error(model, HELLO)
    assert isinstance(exc, ModelAccessDeniedError)
    assert exc.__cause__ is not None and model.classify_error(exc.__cause__) == "access_denied"
    assert service.calls == 1


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_429_is_classified_throttled_and_retried(provider: str, service: Service) -> None:
    build, _, throttle, _ = PROVIDERS[provider]
    service.answer(429, throttle)
    model = build(service.url, max_retries=2, initial_backoff=0.0, max_backoff=0.0)
    _, exc = collect_until_error(model, HELLO)
    assert isinstance(exc, ModelThrottledError)
    assert exc.__cause__ is not None and model.classify_error(exc.__cause__) == "throttled"
    assert service.calls == 3  # the first try and two retries
