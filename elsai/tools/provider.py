"""ToolProvider: an object that contributes several tools when an agent is built.

An MCP client is the first one: it connects to a server and lists the server's tools. The
registry asks a provider for its tools once, at build, and remembers which providers it had to
start so that the agent closes exactly what it opened (a client the caller started stays open,
e.g. one reused across warm Lambda invocations).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from elsai.tools.base import AgentTool


@runtime_checkable
class ToolProvider(Protocol):
    """Contributes tools at agent build; `load_tools` says whether it started anything."""

    def load_tools(self) -> tuple[Sequence[AgentTool], bool]:
        """Return the tools and whether this call started the provider (then the caller closes it)."""
        ...

    def close(self) -> None:
        """Release what the provider holds (connections, subprocesses). Safe to call twice."""
        ...
