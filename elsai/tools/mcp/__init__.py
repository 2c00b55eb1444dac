"""MCP tools: `MCPClient.stdio(...)` / `MCPClient.http(...)` as tool providers for an Agent.

Needs the optional extra `mcp` (`pip install 'elsai[mcp]'`); the `mcp` package is imported
only when a client starts, so importing this module (or `elsai`) stays cheap.
"""

from elsai.tools.mcp.client import HttpTransport, MCPClient, StdioTransport
from elsai.tools.mcp.errors import MCPCallError, MCPConnectionError
from elsai.tools.mcp.tool import IDEMPOTENCY_META_KEY, TOOL_USE_META_KEY, MCPTool

__all__ = [
    "IDEMPOTENCY_META_KEY",
    "TOOL_USE_META_KEY",
    "HttpTransport",
    "MCPCallError",
    "MCPClient",
    "MCPConnectionError",
    "MCPTool",
    "StdioTransport",
]
