"""Per-node status of a multi-agent job, for `GET /jobs/{id}`: read from multi_agent.json.

The API only reads the cursor the Plan/Fold steps write (it never builds the Graph): each
node's latest recorded status, and "running" for the nodes of the batch in flight.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from elsai.ids import validate_id
from elsai.session.layout import keys

if TYPE_CHECKING:
    from elsai.session.storage.base import StorageBackend


def node_status(storage: StorageBackend, session_id: str) -> dict[str, Any] | None:
    """{"kind", "status", "nodes": {name: status}, ["current_node"]}; None for a single agent."""
    stored = storage.read(keys.multi_agent_key(validate_id(session_id, "session_id")))
    if stored is None:
        return None
    try:
        cursor = json.loads(stored.data)
    except ValueError:
        return None  # not ours to judge here: `elsai sessions check` reports a corrupt cursor
    if not isinstance(cursor, dict):
        return None
    results = cursor.get("node_results") or {}
    nodes = {str(name): str(r.get("status")) for name, r in results.items() if isinstance(r, dict)}
    running = cursor.get("status") == "executing"
    if cursor.get("type") == "swarm":
        batch = [cursor["current_node"]] if running and cursor.get("current_node") else []
    else:
        batch = list(cursor.get("next_nodes") or []) if running else []
    for name in batch:
        nodes[str(name)] = "running"
    view: dict[str, Any] = {
        "kind": cursor.get("type"),
        "status": cursor.get("status"),
        "nodes": nodes,
    }
    if cursor.get("type") == "swarm":
        view["current_node"] = cursor.get("current_node")
    return view
