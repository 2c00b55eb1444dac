"""A finished Graph is drawn whole: its cursor carries the edges, untaken ones included."""

from __future__ import annotations

import re
from pathlib import Path

from elsai.console.graph import edges_of, graph_section
from elsai.multiagent import GraphBuilder
from elsai.session import FileSessionManager
from tests.unit.multiagent.helpers import agent, read_cursor


def test_a_finished_graph_is_drawn_with_every_edge_and_its_untaken_branch(tmp_path: Path) -> None:
    builder = (
        GraphBuilder()
        .add_node(agent("plan", ["plan done"], store=tmp_path), "plan")
        .add_node(agent("write", ["written"], store=tmp_path), "write")
        .add_node(agent("review", ["never"], store=tmp_path), "review")
        .add_edge("plan", "write")
        .add_edge("plan", "review", condition=lambda state: False)
    )
    graph = builder.set_session_manager(FileSessionManager("job", str(tmp_path))).build()
    graph("a task")

    cursor = read_cursor(tmp_path)
    assert cursor["status"] == "completed" and cursor["next_nodes"] == []
    assert cursor["edges"] == [
        {"from_node": "plan", "to_node": "write", "conditional": False},
        {"from_node": "plan", "to_node": "review", "conditional": True},
    ]
    drawn = graph_section("job", cursor, None)
    assert drawn.count('class="edge"') == 2
    states = dict(re.findall(r'data-node="([^"]+)" data-state="([^"]+)"', drawn))
    assert states == {"plan": "done", "write": "done", "review": "not started"}
    assert "<title>review: not started</title>" in drawn  # the link's name: whole, with its state
    assert 'role="group"' in drawn and 'role="img"' not in drawn  # an image would hide the links


def test_stored_edges_are_untrusted_and_escaped() -> None:
    cursor = {
        "type": "graph", "status": "completed", "execution_order": ["a"],
        "node_results": {"a": {"status": "completed"}},
        "edges": [{"from_node": "a", "to_node": "<script>x</script>"}, "junk", {"from_node": 3}],
    }  # fmt: skip
    assert edges_of(cursor) == [("a", "<script>x</script>")]
    drawn = graph_section("s", cursor, None)
    assert "<script>" not in drawn and drawn.count('class="edge"') == 1
    assert edges_of({"edges": "not a list"}) == []
