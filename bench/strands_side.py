"""Build strands-agents agents for the benchmarks (bench-only peer; never an elsai dependency).

`ReplayModel` is our own scripted subclass of `strands.models.Model`: it replays assistant
messages as Bedrock-Converse-shaped stream events (messageStart, contentBlockStart/Delta/Stop,
messageStop, metadata), chunked like elsai's ScriptedModel.
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncGenerator, AsyncIterable
from typing import Any

from strands import Agent, tool
from strands.agent.conversation_manager import NullConversationManager
from strands.models import Model
from strands.session import FileSessionManager, S3SessionManager

from bench import workload

AGENT_ID = "bench"


class ReplayModel(Model):
    """Replays a list of Converse assistant messages, one per model call."""

    def __init__(self, responses: list[dict[str, Any]]) -> None:
        self._responses = list(responses)
        self._next = 0

    def update_config(self, **model_config: Any) -> None:
        return None

    def get_config(self) -> dict[str, Any]:
        return {"provider": "replay", "responses": len(self._responses)}

    async def structured_output(  # type: ignore[override]
        self, output_model: Any, prompt: Any, system_prompt: str | None = None, **kwargs: Any
    ) -> AsyncGenerator[dict[str, Any], None]:
        raise NotImplementedError("the benchmark never asks for structured output")
        yield {}  # pragma: no cover

    async def stream(  # type: ignore[override]
        self,
        messages: Any,
        tool_specs: Any = None,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> AsyncIterable[dict[str, Any]]:
        if self._next >= len(self._responses):
            raise RuntimeError(f"ReplayModel ran out of its {len(self._responses)} responses")
        message = self._responses[self._next]
        self._next += 1
        for event in _events(message):
            yield event


def _events(message: dict[str, Any]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    has_tool = False
    chars = 0
    for index, block in enumerate(message["content"]):
        if "text" in block:
            text = block["text"]
            chars += len(text)
            events.append({"contentBlockStart": {"contentBlockIndex": index, "start": {}}})
            for i in range(0, max(len(text), 1), workload.TEXT_CHUNK):
                events.append(
                    {
                        "contentBlockDelta": {
                            "contentBlockIndex": index,
                            "delta": {"text": text[i : i + workload.TEXT_CHUNK]},
                        }
                    }
                )
        elif "toolUse" in block:
            has_tool = True
            use = block["toolUse"]
            events.append(
                {
                    "contentBlockStart": {
                        "contentBlockIndex": index,
                        "start": {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}},
                    }
                }
            )
            raw = json.dumps(use.get("input", {}))
            chars += len(raw)
            for i in range(0, len(raw), workload.TOOL_INPUT_CHUNK):
                events.append(
                    {
                        "contentBlockDelta": {
                            "contentBlockIndex": index,
                            "delta": {"toolUse": {"input": raw[i : i + workload.TOOL_INPUT_CHUNK]}},
                        }
                    }
                )
        events.append({"contentBlockStop": {"contentBlockIndex": index}})
    events.append({"messageStop": {"stopReason": "tool_use" if has_tool else "end_turn"}})
    out = max(1, chars // 4)
    events.append(
        {
            "metadata": {
                "usage": {"inputTokens": 10, "outputTokens": out, "totalTokens": 10 + out},
                "metrics": {"latencyMs": 0},
            }
        }
    )
    return events


@tool(name=workload.TOOL_NAME)
def bump(n: int) -> str:
    """Bump a counter.

    Args:
        n: The step number.
    """
    return workload.bump_impl(n)


def file_manager(session_id: str, storage_dir: str) -> FileSessionManager:
    return FileSessionManager(session_id=session_id, storage_dir=storage_dir)


class ReusedClientSession:
    """A `boto3.Session` stand-in whose `client()` returns one cached client per service/endpoint.

    strands' S3SessionManager has no client parameter: it always calls
    `boto_session.client("s3", config=..., endpoint_url=...)`. Passing an object like this one
    (a few lines of user code) is how a strands user reuses one client across manager
    instances, the advantage elsai's process-wide client cache gives it by default. The
    config strands passes (its user-agent tag) is the same on every call, so it is not part
    of the key.
    """

    def __init__(self, session: Any = None) -> None:
        import boto3

        self._session = session or boto3.Session()
        self._clients: dict[tuple[str, str | None], Any] = {}
        self._lock = threading.Lock()

    def client(self, service_name: str, *args: Any, **kwargs: Any) -> Any:
        key = (service_name, kwargs.get("endpoint_url"))
        with self._lock:
            if key not in self._clients:
                self._clients[key] = self._session.client(service_name, *args, **kwargs)
            return self._clients[key]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


def s3_manager(session_id: str, bucket: str, boto_session: Any = None) -> S3SessionManager:
    return S3SessionManager(
        session_id=session_id, bucket=bucket, prefix="", boto_session=boto_session
    )


def make_agent(
    responses: list[dict[str, Any]],
    *,
    session_manager: Any = None,
    null_cm: bool = False,
) -> Agent:
    kwargs: dict[str, Any] = {}
    if null_cm:
        kwargs["conversation_manager"] = NullConversationManager()
    return Agent(
        model=ReplayModel(responses),
        tools=[bump],
        agent_id=AGENT_ID,
        session_manager=session_manager,
        callback_handler=None,
        **kwargs,
    )


#: The session manager's hook callbacks that run during an invocation (see
#: strands.session.session_manager.SessionManager.register_hooks); they look the method up
#: on the instance at call time, so wrapping the instance attribute catches every call.
SESSION_CALLBACKS = ("append_message", "sync_agent", "redact_latest_message")


def time_session_layer(agent: Agent, timer: Any) -> Any:
    """Wrap the agent's session manager so `timer` adds up the time spent in it."""
    return timer.wrap(agent._session_manager, SESSION_CALLBACKS)


def invoke(agent: Agent, prompt: str) -> str:
    result = agent(prompt)
    return str(result.stop_reason)


def message_count(agent: Agent) -> int:
    return len(agent.messages)
