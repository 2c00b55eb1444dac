"""What the loop needs from a tool: a Converse tool spec and an async invoke."""

from __future__ import annotations

import abc
from typing import Any

from elsai.tools.context import ToolContext
from elsai.types import ToolResult, ToolSpec, ToolUse


class AgentTool(abc.ABC):
    """A tool the model may call. `@tool` builds these from functions."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The name the model calls the tool by."""

    @property
    @abc.abstractmethod
    def spec(self) -> ToolSpec:
        """The Converse spec the model sees."""

    @abc.abstractmethod
    async def invoke(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        """Run the tool. Must not raise for tool failures: return an error result instead."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class WrappedTool(AgentTool):
    """A tool around another one: the model sees the inner tool's name and spec.

    Subclasses change only `invoke` (a time limit, instrumentation, ...).
    """

    def __init__(self, inner: AgentTool) -> None:
        """Wrap `inner`."""
        self.inner = inner

    @property
    def name(self) -> str:
        """The wrapped tool's name."""
        return self.inner.name

    @property
    def spec(self) -> ToolSpec:
        """The wrapped tool's spec: the model sees the same tool."""
        return self.inner.spec


def error_result(tool_use_id: str, text: str) -> ToolResult:
    """An error result the model can read and react to."""
    return {"toolUseId": tool_use_id, "status": "error", "content": [{"text": text}]}


def success_result(tool_use_id: str, value: Any) -> ToolResult:
    """Wrap a Python return value as a toolResult (str → text, dict/list → json)."""
    if isinstance(value, dict) and value.get("toolUseId") == tool_use_id and "content" in value:
        return value  # type: ignore[return-value]  # already a ToolResult
    if isinstance(value, str):
        content: list[Any] = [{"text": value}]
    elif isinstance(value, (dict, list, int, float, bool)) or value is None:
        content = [{"json": value}]
    else:
        content = [{"text": str(value)}]
    return {"toolUseId": tool_use_id, "status": "success", "content": content}
