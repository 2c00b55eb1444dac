"""`elsai local run --example graph` as a user runs it: a subprocess in the repo, JSON summary."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_the_graph_example_kills_one_writer_and_only_that_branch_is_retried() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "MOTO_", "ELSAI_"))}
    env.update({"JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20", "NO_COLOR": "1",
                "ELSAI_EXAMPLE_TOOL_SECONDS": "1"})  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "elsai.cli", "local", "run", "--example", "graph", "--json", "Otters"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["status"] == "SUCCEEDED"
    assert summary["text"].startswith("Final piece: [writer_a] opening section drafted")
    runs = [(i["node"], i["attempt"], i["outcome"]) for i in summary["invocations"]]
    assert runs[0] == ("researcher", 1, "completed") and runs[-1] == ("editor", 1, "completed")
    assert sorted(runs[1:-1]) == [
        ("writer_a", 1, "killed"), ("writer_a", 2, "completed"), ("writer_b", 1, "completed"),
    ]  # fmt: skip
    retried = next(
        i for i in summary["invocations"] if i["node"] == "writer_a" and i["attempt"] == 2
    )
    assert retried["resumed_from"] == "after_model"
    assert summary["writer_overlap_s"] > 0
    assert summary["completed_nodes_rerun"] == []
    assert summary["tool_runs"] == {
        "researcher:research": 1, "writer_a:write_section": 2, "writer_b:write_section": 1,
    }  # fmt: skip
