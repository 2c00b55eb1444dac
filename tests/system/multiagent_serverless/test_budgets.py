"""maxSlices and maxModelCalls count every node of a Graph job; Fold names the node that crossed.

The Lambda-side steps run in this process on a file session (bench/fanout_graph.py: planner
-> 3 writers -> editor, every node one tool call, so two model calls, in one slice); the
state machine's side (Fold gets the job's totals, the Fail state takes the error type) is
tests/unit/cdk/test_multi_agent_continuation.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.fanout_graph import build_agent
from elsai.serverless.budgets import budget_breach
from elsai.serverless.contract import JobStepRequest
from elsai.serverless.contract.node_steps import FoldRequest, NodeSliceRequest, PlanResult
from elsai.serverless.orchestration import build_steps, fold, plan, run_node_slice
from elsai.session import FileSessionManager

IDS = {"job_id": "job-b", "execution_id": "arn:exec:job-b", "session_id": "job-b",
       "agent_id": "fanout-5"}  # fmt: skip


def _batch(tmp_path: Path, planned: PlanResult) -> list[dict[str, Any]]:
    """Run the planned batch's node slices one after the other (they finish in batch order)."""
    reports = []
    for item in planned.nodes:
        request = NodeSliceRequest(**IDS, node=item["node"], started_at=item["started_at"])
        steps = build_steps(request, session_manager=_manager(tmp_path), factory=build_agent)
        reports.append(run_node_slice(request, steps, remaining_ms=lambda: 10**9).model_dump())
    return reports


def _manager(tmp_path: Path) -> FileSessionManager:
    return FileSessionManager("job-b", str(tmp_path))


def _fold(
    tmp_path: Path, planned: PlanResult, reports: list[dict[str, Any]], **totals: Any
) -> PlanResult:
    request = FoldRequest(**IDS, batch=planned.batch, results=reports, **totals)
    return fold(
        request, build_steps(request, session_manager=_manager(tmp_path), factory=build_agent)
    )


def _to_writers(tmp_path: Path) -> tuple[PlanResult, list[dict[str, Any]]]:
    steps = build_steps(
        JobStepRequest(**IDS), session_manager=_manager(tmp_path), factory=build_agent
    )
    planned = plan(JobStepRequest(**IDS, prompt="go"), steps)
    first = _fold(tmp_path, planned, _batch(tmp_path, planned), slice=1, max_slices=10)
    assert first.status == "run" and (first.slices, first.model_calls) == (1, 2)
    return first, _batch(tmp_path, first)


def test_the_slice_budget_counts_every_node_and_names_the_one_that_crossed_it(
    tmp_path: Path,
) -> None:
    writers, reports = _to_writers(tmp_path)
    # 2 slices so far (RunSlice, planner); budget 4: the third writer to finish crosses it
    folded = _fold(tmp_path, writers, reports, slice=2, model_calls=2, max_slices=4)
    assert folded.status == "failed" and folded.error_type == "SliceBudgetExhausted"
    third = sorted(reports, key=lambda r: r["ended_at"])[2]["node"]
    assert f"node {third!r} crossed it (5 slices)" in folded.error
    assert (folded.slices, folded.model_calls) == (3, 6) and folded.nodes == []


def test_the_model_call_budget_counts_every_node(tmp_path: Path) -> None:
    writers, reports = _to_writers(tmp_path)
    folded = _fold(tmp_path, writers, reports, slice=2, model_calls=2, max_model_calls=5)
    second = sorted(reports, key=lambda r: r["ended_at"])[1]["node"]
    assert folded.status == "failed" and folded.error_type == "ModelCallBudgetExhausted"
    assert f"node {second!r} crossed it (6 calls)" in folded.error


def test_within_budget_the_run_goes_on(tmp_path: Path) -> None:
    writers, reports = _to_writers(tmp_path)
    folded = _fold(tmp_path, writers, reports, slice=2, model_calls=2, max_slices=6,
                   max_model_calls=9)  # fmt: skip
    assert folded.status == "run" and [n["node"] for n in folded.nodes] == ["editor"]
    assert folded.error_type == "MultiAgentFailed" and folded.error == ""


@pytest.mark.parametrize(
    ("more_to_run", "expected"), [(True, "SliceBudgetExhausted"), (False, None)]
)
def test_reaching_the_budget_fails_only_with_work_left(
    more_to_run: bool, expected: str | None
) -> None:
    breach = budget_breach([{"node": "a", "slice": 1}], slices_before=2, model_calls_before=0,
                           max_slices=4, max_model_calls=None, more_to_run=more_to_run)  # fmt: skip
    assert (breach.error_type if breach else None) == expected
    assert breach is None or "node 'a' reached it" in breach.message


def test_stored_counts_that_are_not_counts_count_as_one_slice_and_no_calls() -> None:
    forged = [{"node": "a", "slice": "9" * 50, "model_calls": -5}, {"node": "b", "slice": 10**30}]
    assert budget_breach(forged, slices_before=0, model_calls_before=0, max_slices=2,
                         max_model_calls=1, more_to_run=False) is None  # fmt: skip
