"""Shared helpers for the multi-agent tests (imported as a plain module, also by child processes)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager
from elsai.session.storage.base import StorageBackend, StoredObject


class Crash(BaseException):
    """Stands in for process death in-process (a BaseException: nothing swallows it)."""


def tool_call(tool_use_id: str, name: str, **inputs: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": tool_use_id, "name": name, "input": inputs}}],
    }


def handoff(
    tool_use_id: str, agent_name: str, message: str, context: dict[str, Any] | None = None
) -> dict[str, Any]:
    inputs: dict[str, Any] = {"agent_name": agent_name, "message": message}
    if context is not None:
        inputs["context"] = context
    return tool_call(tool_use_id, "handoff_to_agent", **inputs)


def agent(
    agent_id: str,
    responses: Sequence[Any],
    *,
    tools: Sequence[Any] = (),
    store: Path | str | None = None,
    session_id: str = "job",
    checkpoint: bool = True,
    description: str | None = None,
    system_prompt: str | None = None,
) -> Agent:
    """A scripted agent; with `store`, persisted in session `session_id` (+ checkpoint "both")."""
    manager = (
        FileSessionManager(session_id=session_id, storage_dir=str(store))
        if store is not None
        else None
    )
    return Agent(
        model=ScriptedModel(list(responses), record="full"),
        tools=list(tools),
        system_prompt=system_prompt,
        config=AgentConfig(
            agent_id=agent_id,
            description=description,
            session_manager=manager,
            checkpoint=CheckpointConfig(position="both")
            if manager is not None and checkpoint
            else None,
        ),
    )


def model_of(node: Agent) -> ScriptedModel:
    model = node.model
    assert isinstance(model, ScriptedModel)
    return model


def request_text(model: ScriptedModel, index: int = 0) -> str:
    """All text the model saw in request `index` (every message, every text block)."""
    request = model.requests[index]
    return "\n".join(b["text"] for m in request.messages for b in m["content"] if "text" in b)


def read_cursor(store: Path, session_id: str = "job") -> dict[str, Any]:
    return json.loads((store / f"session_{session_id}" / "multi_agent.json").read_text())


def stored_messages(store: Path, agent_id: str, session_id: str = "job") -> list[dict[str, Any]]:
    folder = store / f"session_{session_id}" / "agents" / f"agent_{agent_id}" / "messages"
    files = sorted(folder.glob("message_*.json"), key=lambda p: int(p.stem.split("_")[1]))
    return [json.loads(p.read_text())["message"] for p in files]


def read_bookmark(store: Path, agent_id: str, session_id: str = "job") -> dict[str, Any] | None:
    path = store / f"session_{session_id}" / "agents" / f"agent_{agent_id}" / "checkpoint.json"
    return json.loads(path.read_text()) if path.exists() else None


class HookedStorage(StorageBackend):
    """Delegates to a real backend; `before_write(key, nth)` runs before each write of a key."""

    def __init__(self, inner: StorageBackend, before_write: Callable[[str, int], None]) -> None:
        self.inner = inner
        self.before_write = before_write
        self.writes: dict[str, int] = {}
        #: Every write, in order: (key, bytes written).
        self.written: list[tuple[str, bytes]] = []

    def _hook(self, key: str, data: bytes) -> None:
        self.writes[key] = self.writes.get(key, 0) + 1
        self.before_write(key, self.writes[key])
        self.written.append((key, data))

    def json_writes(self, suffix: str) -> list[dict[str, Any]]:
        return [json.loads(data) for key, data in self.written if key.endswith(suffix)]

    def read(self, key: str) -> StoredObject | None:
        return self.inner.read(key)

    def read_many(self, keys: Any) -> list[StoredObject | None]:
        return self.inner.read_many(keys)

    def create(self, key: str, data: bytes) -> str:
        self._hook(key, data)
        return self.inner.create(key, data)

    def replace(self, key: str, data: bytes, *, expected_version: str | None) -> str:
        self._hook(key, data)
        return self.inner.replace(key, data, expected_version=expected_version)

    def list(self, prefix: str) -> list[str]:
        return self.inner.list(prefix)

    def describe(self, key: str) -> str:
        return self.inner.describe(key)
