"""ToolRegistry: the tools one agent offers, by name, in a stable order.

Order matters: specs are sent to the model in registration order, and a stable tool list
keeps provider prompt caches warm.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from elsai.tools.base import AgentTool
from elsai.tools.decorator import tool
from elsai.tools.provider import ToolProvider
from elsai.types import ToolSpec

ToolLike = AgentTool | Callable[..., Any]


class ToolRegistry:
    """Name → tool lookup. Plain functions are wrapped with `@tool` on registration.

    A `ToolProvider` (e.g. an MCP client) contributes all its tools; providers the registry
    had to start are closed by `close()`, so an agent closes exactly what it opened.
    """

    def __init__(self, tools: Iterable[ToolLike | ToolProvider] | None = ()) -> None:
        self._tools: dict[str, AgentTool] = {}
        self._specs: list[ToolSpec] | None = None
        self._opened: list[ToolProvider] = []
        try:
            for item in tools or ():
                if isinstance(item, ToolProvider) and not isinstance(item, AgentTool):
                    self.add_provider(item)
                else:
                    self.register(item)
        except BaseException:
            self.close()
            raise

    def add_provider(self, provider: ToolProvider) -> None:
        """Register every tool of `provider`; remember it for `close()` if this started it."""
        tools, opened = provider.load_tools()
        if opened:
            self._opened.append(provider)
        for item in tools:
            self.register(item)

    def close(self) -> None:
        """Close the providers this registry started (idempotent)."""
        opened, self._opened = self._opened, []
        for provider in reversed(opened):
            provider.close()

    def register(self, item: ToolLike) -> AgentTool:
        """Add a tool; return the AgentTool actually stored (the wrapper, for a function)."""
        if isinstance(item, AgentTool):
            agent_tool = item
        elif callable(item):
            agent_tool = tool(item)
        else:
            raise TypeError(f"not a tool: {item!r} (expected an AgentTool or a function)")
        name = agent_tool.name
        if name in self._tools:
            raise ValueError(f"duplicate tool name {name!r}: tool names must be unique")
        self._tools[name] = agent_tool
        self._specs = None
        return agent_tool

    def get(self, name: str) -> AgentTool | None:
        """The tool called `name`, if registered."""
        return self._tools.get(name)

    def specs(self) -> list[ToolSpec]:
        """Tool specs in registration order; computed once per change of the tool set."""
        if self._specs is None:
            self._specs = [t.spec for t in self._tools.values()]
        return list(self._specs)

    @property
    def names(self) -> list[str]:
        """Registered tool names, in registration order."""
        return list(self._tools)

    def __contains__(self, item: object) -> bool:
        if isinstance(item, str):
            return item in self._tools
        if isinstance(item, AgentTool):
            return self._tools.get(item.name) is item
        return False

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[AgentTool]:
        return iter(list(self._tools.values()))

    def __repr__(self) -> str:
        return f"ToolRegistry({self.names!r})"
