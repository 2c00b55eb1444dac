"""What a Graph's and a Swarm's steps share: the steps interface, their outcome, node reports.

`graph(task)` plans, runs and folds batches in one process. A distributed engine (the
serverless runtime: Step Functions runs each node in Lambda slices of its own) calls the
same steps one at a time, each possibly in another process, through the orchestrator's
`as_steps()` (`elsai.multiagent.graph.steps`, `elsai.multiagent.swarm.steps`):

- `plan(task, invocation_id, answered)`: start or continue the run stored in multi_agent.json
  and name the nodes to run now (a node waiting for a person only once it is answered), or
  say that the run ended or only waits are left;
- `node_call(name, answers, node_started_at)`: how to invoke one of those nodes (input,
  invocation id, remaining time budget): the call `graph(task)` itself would make;
- `fold(batch, results)`: record the nodes' results, evaluate edges, pick the next batch.

Every step rebuilds the run from multi_agent.json and writes it back conditionally, with the
in-process code's own record/limit/edge logic, so both paths leave the same layout.
Timeouts are measured on the wall clock from the run's `created_at` (execution_timeout) and
from when the node's execution started (node_timeout), so they hold across processes.
"""

from __future__ import annotations

import abc
import time
import uuid
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from elsai.agent.agent import Agent
from elsai.multiagent.base import NodeResult, Status, Task, empty_metrics, restored_agent_result
from elsai.multiagent.invoke import NodeCall
from elsai.multiagent.persistence import GraphCursor, SwarmCursor
from elsai.types import text_of


@dataclass
class StepOutcome:
    """What a plan or fold step decided. Small: names and statuses, never transcripts."""

    #: EXECUTING: run `nodes` next. COMPLETED / FAILED / INTERRUPTED: the run stopped.
    status: Status
    nodes: list[str] = field(default_factory=list)
    #: The run's execution count when `nodes` were planned; a fold of the same batch
    #: that arrives twice (a retried fold) is recognised by it and changes nothing.
    batch: int = 0
    error: str | None = None
    #: The run's answer text once it completed.
    text: str = ""
    #: Pending interrupts of interrupted nodes, each with the "node" that raised it.
    interrupts: list[dict[str, Any]] = field(default_factory=list)
    #: Latest status of every node that ran, by name.
    node_status: dict[str, str] = field(default_factory=dict)
    #: The orchestrator, its run, and when that run started (ISO-8601 UTC, from its cursor):
    #: what a trace of a run spread over many processes needs (`elsai.telemetry.job_spans`).
    orchestrator_id: str = ""
    run_id: str = ""
    started_at: str = ""


class OrchestratorSteps(abc.ABC):
    """A Graph's or a Swarm's run as plan / node_call / fold steps (see the module docstring)."""

    #: "graph" or "swarm": which orchestrator the steps drive.
    kind: str

    @abc.abstractmethod
    def plan(self, task: Task, invocation_id: str, answered: Collection[str] = ()) -> StepOutcome:
        """Start the run keyed by `invocation_id` (or continue the stored one); the nodes to run now.

        A node waiting for a person is planned again only once it is in `answered` (its
        answers go with it); until then the nodes that do not depend on it run.
        """

    @abc.abstractmethod
    def shape(self) -> tuple[list[str], list[str]]:
        """The node names and the edges (``"a -> b"``): what a build fingerprint records."""

    @abc.abstractmethod
    def node_agent(self, name: str) -> Agent:
        """The Agent of node `name` (a clear error for a name the orchestrator does not have)."""

    @abc.abstractmethod
    def node_call(
        self, name: str, answers: Task | None = None, node_started_at: float | None = None
    ) -> NodeCall | None:
        """How to invoke node `name` now (None: it already finished and is not re-run)."""

    @abc.abstractmethod
    def handed_off(self, name: str) -> bool:
        """Whether node `name` ended its execution with a handoff (its pause then means done)."""

    @abc.abstractmethod
    def fold(self, batch: int, reports: dict[str, dict[str, Any]]) -> StepOutcome:
        """Record the batch's node reports (once per batch); the next batch or the end.

        A report is what ran the node says about it (see `node_result_from_report`); the
        answer text is read from the node agent's own session, never carried.
        """

    def node_results(self, reports: dict[str, dict[str, Any]]) -> dict[str, NodeResult]:
        """The NodeResults the reports of a batch stand for, by node name."""
        return {
            name: node_result_from_report(self.node_agent(name), r) for name, r in reports.items()
        }


def continues(cursor: GraphCursor | SwarmCursor | None, invocation_id: str) -> bool:
    """Whether the stored run is this invocation's own (a retried plan) or may be continued."""
    return cursor is not None and (cursor.invocation_id == invocation_id or cursor.continuable)


def elapsed_since(iso: str) -> float:
    """Seconds since an ISO-8601 UTC timestamp of the cursor (0 if it cannot be read)."""
    try:
        return max(time.time() - datetime.fromisoformat(iso).timestamp(), 0.0)
    except ValueError:
        return 0.0


def shorten(call: NodeCall, node_started_at: float | None) -> NodeCall:
    """`call` with the time its node already spent (in earlier slices) taken off its timeout."""
    if call.timeout is None or node_started_at is None:
        return call
    spent = max(time.time() - node_started_at, 0.0)
    return replace(call, timeout=max(call.timeout - spent, 0.0))


def new_run_id() -> str:
    """A run id for a run the plan step starts."""
    return uuid.uuid4().hex[:12]


def node_result_from_report(agent: Agent, report: dict[str, Any]) -> NodeResult:
    """The NodeResult of one node execution that ran elsewhere, from its small report.

    report: {"status": "completed" | "failed" | "interrupted" | "paused", "stop_reason",
    "error", "usage", "metrics", "interrupts", "resumed_from_checkpoint", "execution_time"};
    a completed node's text is its agent's last answer in the session.
    """
    status = Status(str(report.get("status")))
    usage = {k: v for k, v in (report.get("usage") or {}).items() if isinstance(v, int)}
    if status == Status.FAILED:
        return NodeResult(
            result=None,
            status=status,
            execution_time=float(report.get("execution_time") or 0.0),
            error=str(report.get("error") or "node failed"),
            usage=usage,  # type: ignore[arg-type]
        )
    last = next((m for m in reversed(agent.messages) if m["role"] == "assistant"), None)
    text = text_of(last) if status == Status.COMPLETED else ""
    result = restored_agent_result(text, report.get("stop_reason"), usage)
    result.interrupts = [dict(i) for i in report.get("interrupts") or []]
    return NodeResult(
        result=result,
        status=status,
        execution_time=float(report.get("execution_time") or 0.0),
        usage=usage,  # type: ignore[arg-type]
        metrics={**empty_metrics(), **(report.get("metrics") or {})},
        resumed_from_checkpoint=bool(report.get("resumed_from_checkpoint")),
    )


__all__ = ["OrchestratorSteps", "StepOutcome", "node_result_from_report"]
