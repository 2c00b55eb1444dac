"""Helpers for the checkpoint spec tests: scripted tool agents over a real session store."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from elsai import tool
from elsai.session.storage.base import StorageBackend, StoredObject


class Crash(BaseException):
    """Stands in for process death inside a tool (a BaseException: nothing swallows it)."""


def tool_call(tool_use_id: str, name: str = "get_weather", **inputs: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": tool_use_id, "name": name, "input": inputs}}],
    }


class Ledger:
    """Records tool runs; `crash_on` makes the n-th run die mid-tool."""

    def __init__(self) -> None:
        self.runs: list[str] = []
        self.crash_on: set[int] = set()

    def make_tool(self) -> Any:
        ledger = self

        @tool
        def get_weather(city: str) -> str:
            """Return weather for a city."""
            ledger.runs.append(city)
            if len(ledger.runs) in ledger.crash_on:
                raise Crash(f"process died while running get_weather({city})")
            return f"Sunny, 72F in {city}"

        return get_weather


class CountingStorage(StorageBackend):
    """Delegates to a real backend and counts calls (for "no reads during a run")."""

    def __init__(self, inner: StorageBackend) -> None:
        self.inner = inner
        self.calls: list[tuple[str, str]] = []
        self.fail_writes_to: Callable[[str], bool] = lambda key: False

    def read(self, key: str) -> StoredObject | None:
        self.calls.append(("read", key))
        return self.inner.read(key)

    def read_many(self, keys: Any) -> list[StoredObject | None]:
        self.calls.extend(("read", k) for k in keys)
        return self.inner.read_many(keys)

    def create(self, key: str, data: bytes) -> str:
        self.calls.append(("create", key))
        if self.fail_writes_to(key):
            raise OSError(f"disk full writing {key}")
        return self.inner.create(key, data)

    def replace(self, key: str, data: bytes, *, expected_version: str | None) -> str:
        self.calls.append(("replace", key))
        if self.fail_writes_to(key):
            raise OSError(f"disk full writing {key}")
        return self.inner.replace(key, data, expected_version=expected_version)

    def list(self, prefix: str) -> list[str]:
        self.calls.append(("list", prefix))
        return self.inner.list(prefix)

    def describe(self, key: str) -> str:
        return self.inner.describe(key)


def agent_dir(store: Path, session_id: str = "my-job", agent_id: str = "worker") -> Path:
    return store / f"session_{session_id}" / "agents" / f"agent_{agent_id}"


def read_bookmark(store: Path, **ids: str) -> dict[str, Any] | None:
    path = agent_dir(store, **ids) / "checkpoint.json"
    return json.loads(path.read_text()) if path.exists() else None


def stored_messages(store: Path, **ids: str) -> list[dict[str, Any]]:
    folder = agent_dir(store, **ids) / "messages"
    files = sorted(folder.glob("message_*.json"), key=lambda p: int(p.stem.split("_")[1]))
    assert [int(p.stem.split("_")[1]) for p in files] == list(range(len(files))), (
        "message files must be contiguous"
    )
    return [json.loads(p.read_text())["message"] for p in files]
