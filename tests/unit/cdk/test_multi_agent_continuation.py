"""Graph and Swarm jobs continue in new executions too, at the single-agent budget rule.

moto executes the synthesized definition with a scripted agent Lambda that plays a Graph of
batches (Plan names them, each node slice completes, Fold moves to the next). The history
cost of a batch and of a node slice that ``elsai/cdk/config.py`` budgets with is measured
here on the same definition.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from elsai.cdk.config import EVENTS_PER_BATCH, EVENTS_PER_SLICE, ElsaiConfig
from elsai.serverless import executions
from infra.synth import synth_template
from tests.unit.cdk.asl_harness import Harness, running

CONTEXT = {"slicesPerExecution": 4, "maxSlices": 40}


def graph_script(batches: list[list[str]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A Graph job whose run is `batches`: the cursor is the folded batch count, as in S3."""
    folded: list[int] = []

    def planned(status: str = "run") -> dict[str, Any]:
        index = len(folded)
        if index >= len(batches):
            return {"status": "completed", "kind": "graph", "batch": index, "text": "done"}
        nodes = [
            {"node": n, "started_at": 1.0, "interrupt_responses": None} for n in batches[index]
        ]
        return {"status": status, "kind": "graph", "nodes": nodes, "batch": index}

    def script(event: dict[str, Any]) -> dict[str, Any]:
        action = event["action"]
        if action == "run_slice":
            return {"status": "orchestrate"}
        if action == "plan":
            return planned()
        if action == "node_slice":
            return {"node": event["node"], "status": "completed", "stop_reason": "end_turn",
                    "slice": event["slice"]}  # fmt: skip
        assert action == "fold"
        if event["batch"] == len(folded):  # a retried fold of the same batch changes nothing
            folded.append(len(event["results"]))
        results = event["results"]
        return {**planned(), "slices": sum(r["slice"] + 1 for r in results),
                "model_calls": sum(r.get("node_model_calls", 0) for r in results)}  # fmt: skip

    return script


@pytest.fixture(scope="module")
def continuation_template() -> dict[str, Any]:
    return synth_template(CONTEXT)


@pytest.fixture
def harness(
    continuation_template: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Harness]:
    with running(continuation_template, monkeypatch) as h:
        yield h


def _finished(h: Harness, job_id: str) -> executions.JobChain:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        chain = executions.follow_job(h.sfn, h.machine_arn, job_id)
        if chain.current["status"] != "RUNNING":
            return chain
        time.sleep(0.05)
    raise AssertionError("job did not finish in 60 s")


def test_a_graph_job_continues_between_batches_and_reports_as_one(harness: Harness) -> None:
    batches = [["planner"], ["w1", "w2"], ["w3"], ["w4"], ["editor"]]
    harness.script = graph_script(batches)
    job_id = harness.start(agent_id="graph").rsplit(":", 1)[1]
    chain = _finished(harness, job_id)

    assert ElsaiConfig().slices_per_batch == 2  # a batch's own states cost 2 slices
    # budget 4: RunSlice + [planner] = 1 + (1 + 2); [w1, w2] = 2 + 2; [w3] + [w4] = 3 + 3;
    # [editor] completes the job in the fourth execution
    assert chain.executions == 4
    view = executions.job_view(job_id, chain)
    assert view["status"] == "SUCCEEDED" and view["result"]["text"] == "done"
    nodes = [c["node"] for c in harness.calls if c["action"] == "node_slice"]
    # every node ran once, in its batch's order, across the chain
    assert nodes[0] == "planner" and sorted(nodes[1:3]) == ["w1", "w2"]
    assert nodes[3:] == ["w3", "w4", "editor"]
    plans = [c for c in harness.calls if c["action"] == "plan"]
    # one RunSlice only (the first execution's); every later execution starts at Plan
    assert len(harness.run_slices()) == 1
    assert {p["job_id"] for p in plans} == {job_id}
    names = [p["execution_id"].rsplit(":", 1)[1] for p in plans]
    assert names == [job_id, f"{job_id}-c1", f"{job_id}-c2", f"{job_id}-c2", f"{job_id}-c3"]
    assert all(p["prompt"] is None for p in plans[1:]) and plans[0]["prompt"] == "hi"


def test_node_slices_count_toward_the_job_across_executions(harness: Harness) -> None:
    harness.script = graph_script([["a"], ["b", "c", "d"]])
    job_id = harness.start(agent_id="graph").rsplit(":", 1)[1]
    chain = _finished(harness, job_id)
    assert chain.current["status"] == "SUCCEEDED"
    first = harness.sfn.describe_execution(executionArn=chain.first["executionArn"])
    # the first execution handed off after RunSlice + batch [a]: 2 slices of the job
    assert json.loads(first["output"])["slice"] == 2


def _events(h: Harness, arn: str) -> int:
    pages = h.sfn.get_paginator("get_execution_history").paginate(executionArn=arn)
    return sum(len(p["events"]) for p in pages)


def test_history_cost_per_batch_and_per_node_slice_matches_the_budget(
    template_dict: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    runs: dict[str, int] = {}
    shapes = {"one": [["a"]], "wide": [["a", "b", "c", "d"]], "long": [["a"], ["b"], ["c"]]}
    with running(template_dict, monkeypatch) as h:
        for name, batches in shapes.items():
            h.script = graph_script(batches)
            arn = h.start(agent_id="graph")
            assert h.wait(arn)["status"] == "SUCCEEDED"
            runs[name] = _events(h, arn)
    per_node_slice = (runs["wide"] - runs["one"]) / 3
    per_batch = (runs["long"] - runs["one"]) / 2 - per_node_slice
    assert 0 < per_node_slice <= EVENTS_PER_SLICE
    assert 0 < per_batch <= EVENTS_PER_BATCH


def test_fold_gets_the_job_totals_and_a_crossed_budget_fails_the_job_with_its_name(
    custom_template_dict: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # custom context: maxSlices 3, maxModelCalls 4
    script = graph_script([["a"], ["b", "c"]])

    def with_calls(event: dict[str, Any]) -> dict[str, Any]:
        result = script(event)
        if event["action"] == "node_slice":
            return {**result, "model_calls": 2, "node_model_calls": 2}
        if event["action"] == "fold" and event["batch"] == 1:
            return {"status": "failed", "kind": "graph", "error": "node 'c' crossed it",
                    "error_type": "SliceBudgetExhausted"}  # fmt: skip
        return result

    with running(custom_template_dict, monkeypatch) as h:
        h.script = with_calls
        arn = h.start(agent_id="graph")
        ended = h.wait(arn)
        folds = [c for c in h.calls if c["action"] == "fold"]
    assert (ended["status"], ended["error"]) == ("FAILED", "SliceBudgetExhausted")
    assert ended["cause"] == "node 'c' crossed it"
    budgets = [(f["slice"], f["model_calls"], f["max_slices"], f["max_model_calls"]) for f in folds]
    # before batch 0: RunSlice's 1 slice; before batch 1: + node a's slice and its 2 calls
    assert budgets == [(1, 0, 3, 4), (2, 2, 3, 4)]
