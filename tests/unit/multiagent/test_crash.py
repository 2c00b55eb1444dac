"""Dual-layer recovery with real processes: kill a child mid-run, rebuild in a second one.

Proof bullets of the Graph/Swarm issue:
- kill inside node 2's tool -> node 1 is not re-run, node 2 resumes from its after_model
  bookmark, the run completes (Graph, and Swarm after a handoff);
- kill between node 1's completion and the multi_agent.json write -> node 1 is not lost: it is
  re-invoked with the same invocation id and returns its stored answer without a model call
  (at most a re-run from its own completed bookmark).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.transcripts import assert_valid_transcript
from tests.unit.multiagent.helpers import read_bookmark, read_cursor, stored_messages

ROOT = Path(__file__).resolve().parents[3]
CHILD = "tests.unit.multiagent.crash_child"
SESSION = "job-9"


def run_child(
    scenario: str, phase: int, store: Path, ledger: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", CHILD, scenario, str(phase), str(store), str(ledger)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def read_ledger(ledger: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in ledger.read_text().splitlines()]


def count(entries: list[dict[str, Any]], **match: Any) -> int:
    return sum(all(e.get(k) == v for k, v in match.items()) for e in entries)


def finish(scenario: str, store: Path, ledger: Path) -> dict[str, Any]:
    done = run_child(scenario, 2, store, ledger)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("scenario", ["graph_tool_kill", "swarm_tool_kill"])
def test_kill_inside_node_2_tool_then_rebuild_resumes_node_2(tmp_path: Path, scenario: str) -> None:
    store, ledger = tmp_path / "sessions", tmp_path / "ledger.jsonl"

    killed = run_child(scenario, 1, store, ledger)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    bookmark = read_bookmark(store, "writer", SESSION)
    assert bookmark is not None and (bookmark["position"], bookmark["execution_status"]) == (
        "after_model",
        "active",
    )
    cursor = read_cursor(store, SESSION)
    assert cursor["status"] == "executing"
    if scenario.startswith("graph"):
        assert cursor["completed_nodes"] == ["researcher"] and cursor["next_nodes"] == ["writer"]
    else:
        assert cursor["current_node"] == "writer" and cursor["node_history"] == ["researcher"]
        assert cursor["shared_context"] == {
            "researcher": {"note": "Research note: Sunny, 72F in Paris."}
        }
    usage_before = cursor["accumulated_usage"]["totalTokens"]

    summary = finish(scenario, store, ledger)

    assert summary["status"] == "completed" and summary["resumed"], summary
    assert summary["order"] == ["researcher", "writer"]
    assert summary["text"] == "Published: it is sunny in Paris."
    entries = read_ledger(ledger)
    # Node 1 is not re-run: no model call and no tool run of the researcher in phase 2.
    assert count(entries, phase=2, event="model", agent="researcher") == 0
    assert count(entries, event="tool", name="get_weather") == 1
    assert summary["model_calls"]["researcher"] == 0
    assert summary["nodes"]["researcher"]["restored"] is True
    # Node 2 resumed from its after_model bookmark: the killed tool ran again (twice in all).
    assert count(entries, event="tool", name="publish") == 2
    assert summary["nodes"]["writer"]["resumed_from_checkpoint"] is True
    assert summary["nodes"]["writer"]["resume_position"] == "after_model"
    assert count(entries, phase=2, event="model", agent="writer") == 1
    # Accumulated usage survives the crash.
    assert (
        summary["usage"]["totalTokens"]
        == usage_before + summary["nodes"]["writer"]["usage"]["totalTokens"]
    )
    final = read_cursor(store, SESSION)
    assert final["status"] == "completed" and final["run_id"] == cursor["run_id"]
    for agent_id in ("researcher", "writer"):
        assert_valid_transcript(stored_messages(store, agent_id, SESSION))
    writer_inputs = [
        m
        for m in stored_messages(store, "writer", SESSION)
        if m["role"] == "user" and any("text" in b for b in m["content"])
    ]
    assert len(writer_inputs) == 1, "node 2's input was recorded exactly once"


def test_kill_between_node_completion_and_cursor_write_loses_nothing(tmp_path: Path) -> None:
    store, ledger = tmp_path / "sessions", tmp_path / "ledger.jsonl"

    died = run_child("graph_write_kill", 1, store, ledger)
    assert died.returncode == 3, died.stderr
    cursor = read_cursor(store, SESSION)
    assert cursor["completed_nodes"] == [] and cursor["next_nodes"] == ["researcher"]
    bookmark = read_bookmark(store, "researcher", SESSION)
    assert bookmark is not None and bookmark["execution_status"] == "completed"

    summary = finish("graph_write_kill", store, ledger)

    assert summary["status"] == "completed", summary
    entries = read_ledger(ledger)
    assert count(entries, event="exit_before_cursor_write") == 1
    # Re-invoked with the same invocation id: its completed conversation answers, no model call.
    assert count(entries, phase=2, event="model", agent="researcher") == 0
    assert count(entries, event="tool", name="get_weather") == 1
    assert summary["nodes"]["researcher"]["text"] == "Research note: Sunny, 72F in Paris."
    assert summary["nodes"]["researcher"]["restored"] is False
    assert summary["order"] == ["researcher", "writer"]
    assert len(stored_messages(store, "researcher", SESSION)) == 4, "nothing was appended to node 1"
    writer_prompt = stored_messages(store, "writer", SESSION)[0]["content"][0]["text"]
    assert "Research note: Sunny, 72F in Paris." in writer_prompt
