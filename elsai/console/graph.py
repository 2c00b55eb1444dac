"""A Graph's or Swarm's nodes drawn from the orchestrator cursor (multi_agent.json), with states.

The cursor records what ran and what runs next, and a Graph's cursor its edges (`edges`);
older cursors only name the edges that fired into nodes still to run, so the drawing shows
the edges it knows. Each node
links to its transcript (the node is an agent of the session). A list beside the drawing says
the same in words, for keyboards and screen readers.
"""

from __future__ import annotations

from typing import Any

from elsai.console.html import badge, esc, href
from elsai.session.inspect.check import SessionSnapshot

_STATE = {"completed": "done", "executing": "running", "failed": "failed",
          "interrupted": "interrupted", "paused": "paused", "pending": "not started"}  # fmt: skip
BOX_W, BOX_H, GAP_X, GAP_Y = 150, 44, 60, 24


def node_states(cursor: dict[str, Any], snap: SessionSnapshot | None) -> dict[str, str]:
    """Node name to one of: done, running, failed, interrupted, paused, not started."""
    states: dict[str, str] = {}
    results = cursor.get("node_results")
    for name, record in results.items() if isinstance(results, dict) else []:
        status = record.get("status") if isinstance(record, dict) else None
        states[str(name)] = _STATE.get(str(status), "not started")
    for name in _names(cursor.get("next_nodes")):
        if name not in states or states[name] == "done":
            running = cursor.get("status") == "executing"
            states[name] = "running" if running else states.get(name, "not started")
    for field, word in (("failed_nodes", "failed"), ("interrupted_nodes", "interrupted")):
        for name in _names(cursor.get(field)):
            states[name] = word
    if cursor.get("type") == "swarm":
        for name in _names(cursor.get("node_history")):
            states.setdefault(name, "done")
        current = cursor.get("current_node")
        if isinstance(current, str) and cursor.get("status") == "executing":
            states[current] = "running"
    for agent_id, agent in snap.agents.items() if snap else []:
        states.setdefault(agent_id, "running" if agent.indices else "not started")
    return states


def edges_of(cursor: dict[str, Any]) -> list[tuple[str, str]]:
    """The edges the cursor knows: the graph's own, inputs of next nodes, triggers, handoffs."""
    found: list[tuple[str, str]] = []
    stored = cursor.get("edges")
    for edge in stored if isinstance(stored, list) else []:
        if isinstance(edge, dict) and edge.get("from_node") and edge.get("to_node"):
            found.append((str(edge["from_node"]), str(edge["to_node"])))
    for field in ("next_inputs", "triggers"):
        value = cursor.get(field)
        for target, sources in value.items() if isinstance(value, dict) else []:
            found += [(s, str(target)) for s in _names(sources)]
    for handoff in cursor.get("handoffs") or []:
        if isinstance(handoff, dict):
            found.append((str(handoff.get("from_node")), str(handoff.get("to_node"))))
    return list(dict.fromkeys(found))


def _names(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _ranks(order: list[str], edges: list[tuple[str, str]]) -> dict[str, int]:
    rank = dict.fromkeys(order, 0)
    for _ in order:  # longest known path into each node (bounded: cycles cannot loop forever)
        for src, dst in edges:
            if src in rank and dst in rank and rank[dst] < rank[src] + 1 <= len(order):
                rank[dst] = rank[src] + 1
    if not edges:  # nothing known about edges: one column per step of the execution order
        rank = {name: i for i, name in enumerate(order)}
    return rank


def graph_section(
    session_id: str, cursor: Any, snap: SessionSnapshot | None, job_id: Any = None
) -> str:
    """The drawing and the list of nodes; an unreadable cursor gets a sentence instead.

    Drawn for a job (`job_id`), a node's link opens its transcript and that job's slices of it.
    """
    job = str(job_id) if isinstance(job_id, str) and job_id else None
    if not isinstance(cursor, dict):
        return '<section><h2>orchestrator</h2><p class="error">multi_agent.json is unreadable</p></section>'
    states = node_states(cursor, snap)
    edges = edges_of(cursor)
    for name in (n for edge in edges for n in edge):  # nodes of the topology yet to run
        states.setdefault(name, "not started")
    executed = [n for n in _names(cursor.get("execution_order")) if n in states]
    order = list(dict.fromkeys([*executed, *states]))
    rank = _ranks(order, edges)
    rows: dict[int, int] = {}
    place: dict[str, tuple[int, int]] = {}
    for name in order:
        column = rank[name]
        place[name] = (column * (BOX_W + GAP_X) + 10, rows.get(column, 0) * (BOX_H + GAP_Y) + 10)
        rows[column] = rows.get(column, 0) + 1
    width = (max(rank.values(), default=0) + 1) * (BOX_W + GAP_X)
    height = max(rows.values(), default=1) * (BOX_H + GAP_Y) + 10
    lines = "".join(_edge(place[s], place[d]) for s, d in edges if s in place and d in place)
    boxes = "".join(_box(href("sessions", session_id, agent=n, job=job), n, states[n], place[n])
                    for n in order)  # fmt: skip
    kind = esc(cursor.get("type") or "multi-agent")
    listing = "".join(
        f'<li><a href="{href("sessions", session_id, agent=n, job=job)}">{esc(n)}</a> '
        f"{badge(states[n])}</li>"
        for n in order
    )
    return (
        f'<section class="graph" aria-labelledby="graph-h"><h2 id="graph-h">{kind} run '
        f"{badge(cursor.get('status'))}</h2>"
        # A group, not an image: an image's parts are hidden, and these are links.
        f'<svg role="group" aria-label="{kind} nodes and their states" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}">'
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z"/></marker></defs>'
        f'{lines}{boxes}</svg><ul class="nodes" aria-label="nodes">{listing}</ul></section>'
    )


def _edge(a: tuple[int, int], b: tuple[int, int]) -> str:
    x1, y1, x2, y2 = a[0] + BOX_W, a[1] + BOX_H // 2, b[0], b[1] + BOX_H // 2
    return f'<line class="edge" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" marker-end="url(#arrow)"/>'


def _box(link: str, name: str, state: str, at: tuple[int, int]) -> str:
    css = state.replace(" ", "_")
    label = name if len(name) <= 18 else name[:17] + "…"
    # Named by its <title> (the whole name and the state, also the tooltip): an aria-label
    # would have to repeat the words shown, which are cut for a long name.
    return (
        f'<a href="{link}" class="node n-{esc(css)}" '
        f'data-node="{esc(name)}" data-state="{esc(state)}">'
        f"<title>{esc(name)}: {esc(state)}</title>"
        f'<rect x="{at[0]}" y="{at[1]}" width="{BOX_W}" height="{BOX_H}" rx="6"/>'
        f'<text x="{at[0] + 8}" y="{at[1] + 18}">{esc(label)}</text>'
        f'<text class="state" x="{at[0] + 8}" y="{at[1] + 36}">{esc(state)}</text></a>'
    )
