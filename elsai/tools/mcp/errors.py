"""MCP errors: one for a server that cannot be reached, one for a call that failed."""

from __future__ import annotations

from elsai.errors import ElsaiError


class MCPConnectionError(ElsaiError):
    """The MCP server could not be started, connected to or listed (raised at agent build)."""


class MCPCallError(ElsaiError):
    """One tool call failed (timeout, server gone, protocol error); becomes an error result."""
