"""The orders MCP server, bundled with the agents: ``python orders_server.py`` (stdio).

Written with the official ``mcp`` package's server API; the resolver node starts it with
``sys.executable`` through elsai's stdio client, so it ships inside the Lambda bundle.
"""

from __future__ import annotations

import json

from mcp.server.mcpserver import MCPServer

ORDERS = {
    "1001": {"order_id": "1001", "item": "kettle", "amount": 49, "status": "damaged on arrival"},
    "1002": {"order_id": "1002", "item": "lamp", "amount": 25, "status": "delivered"},
}

server = MCPServer("support-desk-orders", instructions="Look up customer orders.")


@server.tool()
def lookup_order(order_id: str) -> str:
    """The order's item, amount and delivery status, as JSON."""
    order = ORDERS.get(order_id)
    if order is None:
        return json.dumps({"order_id": order_id, "error": "no such order"})
    return json.dumps(order)


if __name__ == "__main__":
    server.run("stdio")
