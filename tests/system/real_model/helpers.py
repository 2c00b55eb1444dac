"""Shared by the real-model tests and their child process: the provider and the stored files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from elsai.models.openai import OpenAIModel


def real_model(base_url: str, gguf: Path, **kwargs: Any) -> OpenAIModel:
    """OpenAIModel against the llama.cpp server: greedy, short answers."""
    params = {"temperature": 0, "max_tokens": 48, **kwargs.pop("params", {})}
    return OpenAIModel(
        model_id=str(gguf),
        client_args={"base_url": base_url, "api_key": "none"},
        params=params,
        **kwargs,
    )


def stored(session_dir: Path, session_id: str, agent_id: str) -> list[dict[str, Any]]:
    """The messages a file session holds for one agent, in order."""
    folder = session_dir / f"session_{session_id}" / "agents" / f"agent_{agent_id}" / "messages"
    files = sorted(folder.glob("message_*.json"), key=lambda p: int(p.stem.split("_")[1]))
    return [json.loads(p.read_text())["message"] for p in files]
