"""A multi-agent job's budgets: every node's slices and model calls count toward the job's.

A single agent's job checks maxSlices / maxModelCalls between slices in the state machine.
A Graph's or Swarm's node slices run in parallel branches, so the state machine hands Fold
the job's totals before the batch and the limits; Fold adds the batch's branches in the
order they finished and names the node whose slices or model calls crossed a limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from elsai.serverless.contract import MODEL_CALL_BUDGET_EXHAUSTED, SLICE_BUDGET_EXHAUSTED


@dataclass(frozen=True)
class BudgetBreach:
    """Which budget a batch crossed, and at which node."""

    error_type: str
    message: str


def _count(item: dict[str, Any], key: str, ceiling: int = 10**9) -> int:
    value = item.get(key)
    return value if isinstance(value, int) and 0 <= value < ceiling else 0


def branch_slices(item: dict[str, Any]) -> int:
    """The slices one branch ran: it reports its last slice's number."""
    return _count(item, "slice", 10**6) + 1


def branch_model_calls(item: dict[str, Any]) -> int:
    """The model calls of every slice of one branch (its node's calls in this execution)."""
    return _count(item, "node_model_calls") or _count(item, "model_calls")


def budget_breach(
    finished: list[dict[str, Any]],
    *,
    slices_before: int,
    model_calls_before: int,
    max_slices: int | None,
    max_model_calls: int | None,
    more_to_run: bool,
) -> BudgetBreach | None:
    """The first budget the batch's branches (in the order they finished) crossed, or None.

    A limit is crossed when the job's total passes it, or reaches it with work still to run
    (the single-agent rule: no slice starts at or over the budget).
    """
    slices, calls = slices_before, model_calls_before
    for item in finished:
        node = str(item.get("node"))
        slices += branch_slices(item)
        calls += branch_model_calls(item)
        if max_slices is not None and slices > max_slices:
            return BudgetBreach(
                SLICE_BUDGET_EXHAUSTED,
                f"the job used its budget of {max_slices} slices (maxSlices) across its nodes; "
                f"node {node!r} crossed it ({slices} slices)",
            )
        if max_model_calls is not None and calls > max_model_calls:
            return BudgetBreach(
                MODEL_CALL_BUDGET_EXHAUSTED,
                f"the job made more than its budget of {max_model_calls} model calls "
                f"(maxModelCalls) across its nodes; node {node!r} crossed it ({calls} calls)",
            )
    if more_to_run and finished:
        node = str(finished[-1].get("node"))
        if max_slices is not None and slices >= max_slices:
            return BudgetBreach(
                SLICE_BUDGET_EXHAUSTED,
                f"the job used its budget of {max_slices} slices (maxSlices) across its nodes "
                f"with work left; node {node!r} reached it",
            )
        if max_model_calls is not None and calls >= max_model_calls:
            return BudgetBreach(
                MODEL_CALL_BUDGET_EXHAUSTED,
                f"the job made its budget of {max_model_calls} model calls (maxModelCalls) "
                f"across its nodes with work left; node {node!r} reached it",
            )
    return None


__all__ = ["BudgetBreach", "branch_model_calls", "branch_slices", "budget_breach"]
