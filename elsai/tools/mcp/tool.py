"""MCPTool: one tool of an MCP server, called through the agent's normal tool path."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from elsai.tools.base import AgentTool, error_result
from elsai.tools.context import ToolContext
from elsai.tools.mcp._results import to_tool_result
from elsai.tools.mcp.errors import MCPCallError
from elsai.types import ToolResult, ToolSpec, ToolUse

if TYPE_CHECKING:
    from elsai.tools.mcp.client import MCPClient

#: `_meta` keys of every call. The idempotency key is stable across a crash re-run of the same
#: pending call (see ToolContext.idempotency_key), so a server can dedupe side effects with it.
IDEMPOTENCY_META_KEY = "elsai/idempotency_key"
TOOL_USE_META_KEY = "elsai/tool_use_id"


class MCPTool(AgentTool):
    """A server tool under its (possibly prefixed) elsai name; never raises into the loop."""

    def __init__(
        self,
        client: MCPClient,
        server_name: str,
        name: str,
        description: str,
        input_schema: dict[str, Any],
    ) -> None:
        self.client = client
        self.server_name = server_name
        self._name = name
        self._spec: ToolSpec = {
            "name": name,
            "description": description or f"MCP tool {server_name}",
            "inputSchema": {"json": input_schema or {"type": "object", "properties": {}}},
        }

    @property
    def name(self) -> str:
        """The name the model sees (prefix included)."""
        return self._name

    @property
    def spec(self) -> ToolSpec:
        """The server's description and input schema, as a Converse tool spec."""
        return self._spec

    async def invoke(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        """Call the server tool with the idempotency key in `_meta`; failures become results."""
        use_id = tool_use["toolUseId"]
        arguments = tool_use.get("input") or {}
        if not isinstance(arguments, dict):
            return error_result(use_id, f"MCP tool {self.name!r} takes a JSON object as input")
        meta = {IDEMPOTENCY_META_KEY: context.idempotency_key, TOOL_USE_META_KEY: use_id}
        try:
            result = await self.client.call_tool_async(self.server_name, arguments, meta)
        except MCPCallError as exc:
            return error_result(use_id, f"Error: {exc}")
        try:
            return to_tool_result(use_id, result)
        except Exception as exc:  # a result we cannot read is the server's fault, not the loop's
            return error_result(use_id, f"Error: unreadable MCP result from {self.name!r}: {exc}")
