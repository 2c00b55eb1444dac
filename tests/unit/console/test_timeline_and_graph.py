"""The job timeline and the multi-agent drawing, from events and cursors as the runtime writes them."""

from __future__ import annotations

import subprocess
import sys

from elsai.console.graph import edges_of, graph_section, node_states
from elsai.console.timeline import bars, event_text, failure_kind, timeline_svg


def _at(second: int) -> str:
    return f"2026-01-01T00:00:{second:02d}Z"


EVENTS = [
    {"type": "slice_started", "slice": 0, "at": _at(0)},
    {"type": "attempt_failed", "slice": 0, "state": "RunSlice", "error": "Runtime.ExitError",
     "cause": "signal: killed", "at": _at(3)},
    {"type": "retry", "slice": 0, "attempt": 2, "at": _at(4)},
    {"type": "resumed", "slice": 0, "position": "after_model", "at": _at(5)},
    {"type": "slice_ended", "slice": 0, "status": "interrupted", "at": _at(6)},
    {"type": "waiting_for_input", "slice": 0, "at": _at(6)},
    {"type": "answered", "slice": 0, "interrupt_ids": ["i1"], "at": _at(9)},
    {"type": "slice_started", "slice": 1, "at": _at(9)},
    {"type": "attempt_failed", "slice": 1, "error": "States.Timeout", "at": _at(12)},
    {"type": "retry", "slice": 1, "attempt": 2, "at": _at(13)},
    {"type": "job_ended", "status": "CANCELLED", "at": _at(14)},
]  # fmt: skip


def test_attempts_waits_and_resumes_become_bars_in_order() -> None:
    shown = [(b.label, b.outcome, b.end) for b in bars(EVENTS)]
    assert [(label, outcome) for label, outcome, _ in shown] == [
        ("slice 0 · attempt 1", "killed"),
        ("slice 0 · attempt 2", "interrupted"),
        ("waiting for input", "answered"),
        ("slice 1 · attempt 1", "timed out"),
        ("slice 1 · attempt 2", "cancelled"),  # still running when the job was cancelled
    ]
    assert all(end is not None for _, _, end in shown)
    assert bars(EVENTS)[1].marks[0][1] == "resumed from after_model"


def test_failure_kinds_come_from_the_error_names() -> None:
    assert failure_kind({"error": "Runtime.ExitError"}) == "killed"
    assert failure_kind({"error": "States.Timeout"}) == "timed out"
    assert failure_kind({"error": "Lambda.TooManyRequestsException"}) == "throttled"
    assert failure_kind({"error": "InjectedFailure"}) == "failed"


def test_the_svg_escapes_and_survives_events_without_times() -> None:
    hostile = [{"type": "slice_started", "slice": "<script>", "at": _at(0)}, {"type": "retry"}]
    svg = timeline_svg(hostile, now=1e10)
    assert "<script>" not in svg and "&lt;script&gt;" in svg


def test_graph_nodes_take_their_states_from_the_cursor() -> None:
    cursor = {
        "type": "graph", "status": "executing", "execution_order": ["a", "b"],
        "node_results": {"a": {"status": "completed"}, "b": {"status": "failed"}},
        "failed_nodes": ["b"], "interrupted_nodes": ["c"], "next_nodes": ["c", "d"],
        "next_inputs": {"d": ["a"]}, "triggers": {"c": ["a"]},
    }  # fmt: skip
    assert node_states(cursor, None) == {
        "a": "done", "b": "failed", "c": "interrupted", "d": "running",
    }  # fmt: skip
    assert edges_of(cursor) == [("a", "d"), ("a", "c")]
    drawn = graph_section("s1", cursor, None)
    assert drawn.count('class="node ') == 4 and drawn.count('class="edge"') == 2
    assert graph_section("s1", "not a cursor", None).count("unreadable") == 1


def test_a_swarm_shows_its_history_and_its_current_node() -> None:
    cursor = {"type": "swarm", "status": "executing", "node_history": ["triage"],
              "current_node": "closer", "handoffs": [{"from_node": "triage", "to_node": "closer"}]}  # fmt: skip
    assert node_states(cursor, None) == {"triage": "done", "closer": "running"}


def test_import_elsai_does_not_import_the_console() -> None:
    code = "import elsai, sys; print(sorted(m for m in sys.modules if m.startswith(('elsai.console', 'elsai.client'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_parallel_node_slices_get_a_bar_each_and_say_their_node() -> None:
    at = "2026-01-01T00:00:0{}Z".format
    events = [
        {"type": "slice_started", "at": at(0), "slice": 0, "node": "a"},
        {"type": "slice_started", "at": at(1), "slice": 0, "node": "b"},
        {"type": "attempt_failed", "at": at(2), "slice": 0, "node": "a", "error": "Sandbox.Exited"},
        {"type": "slice_ended", "at": at(3), "slice": 0, "node": "b", "status": "completed"},
        {"type": "retry", "at": at(4), "slice": 0, "node": "a", "attempt": 2},
        {"type": "slice_ended", "at": at(5), "slice": 0, "node": "a", "status": "completed"},
    ]
    shown = [(b.label, b.outcome) for b in bars(events)]
    assert shown == [
        ("a · slice 0 · attempt 1", "killed"),
        ("b · slice 0 · attempt 1", "completed"),
        ("a · slice 0 · attempt 2", "completed"),
    ]
    assert event_text(events[4]) == "slice 0 of node a retried: attempt 2"
    # the label column grows to fit the node names (23 characters here), a job's alone keeps it
    assert '<text class="axis" x="171" y="12">0 s</text>' in timeline_svg(events, 0)
    alone = [{**e, "node": None} for e in events[:1]]
    assert '<text class="axis" x="150" y="12">0 s</text>' in timeline_svg(alone, 0)
