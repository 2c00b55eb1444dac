"""Graph and Swarm runs as separate steps, for an engine that schedules the nodes itself.

`graph(task)` plans, runs and folds batches in one process. A distributed engine (the
serverless runtime: Step Functions runs each node in Lambda slices of its own) calls the
same steps one at a time, each possibly in another process:

- `plan(task, invocation_id)`: start or continue the run stored in multi_agent.json and name
  the nodes to run now, or say that the run ended;
- `node_call(name, answers, node_started_at)`: how to invoke one of those nodes (input,
  invocation id, remaining time budget): the call `graph(task)` itself would make;
- `fold(batch, results)`: record the nodes' results, evaluate edges, pick the next batch.

Every step rebuilds the run from multi_agent.json and writes it back conditionally, with the
in-process code's own record/limit/edge logic, so both paths leave the same layout.
Timeouts are measured on the wall clock from the run's `created_at` (execution_timeout) and
from when the node's execution started (node_timeout), so they hold across processes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from elsai.agent.agent import Agent
from elsai.interrupt.model import interrupt_dict
from elsai.multiagent.base import (
    MultiAgentBase,
    NodeResult,
    Status,
    Task,
    empty_metrics,
    restored_agent_result,
)
from elsai.multiagent.graph.execution import GraphExecution
from elsai.multiagent.graph.graph import Graph
from elsai.multiagent.graph.state import GraphState
from elsai.multiagent.invoke import NodeCall
from elsai.multiagent.persistence import CursorStore, GraphCursor, SwarmCursor
from elsai.multiagent.swarm.handoff import Handoff
from elsai.multiagent.swarm.state import SwarmState
from elsai.multiagent.swarm.swarm import Swarm
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


def _continues(cursor: GraphCursor | SwarmCursor | None, invocation_id: str) -> bool:
    """Whether the stored run is this invocation's own (a retried plan) or may be continued."""
    return cursor is not None and (cursor.invocation_id == invocation_id or cursor.continuable)


def _elapsed_since(iso: str) -> float:
    """Seconds since an ISO-8601 UTC timestamp of the cursor (0 if it cannot be read)."""
    try:
        return max(time.time() - datetime.fromisoformat(iso).timestamp(), 0.0)
    except ValueError:
        return 0.0


def _shorten(call: NodeCall, node_started_at: float | None) -> NodeCall:
    """`call` with the time its node already spent (in earlier slices) taken off its timeout."""
    if call.timeout is None or node_started_at is None:
        return call
    spent = max(time.time() - node_started_at, 0.0)
    return replace(call, timeout=max(call.timeout - spent, 0.0))


class GraphSteps:
    """A Graph's run as plan / node_call / fold steps (see the module docstring)."""

    kind = "graph"

    def __init__(self, graph: Graph) -> None:
        if graph.session_manager is None:
            raise ValueError(
                f"graph {graph.id!r} needs a session manager to run as steps (its cursor is the state)"
            )
        for node in graph.nodes.values():
            if not isinstance(node.executor, Agent):
                raise ValueError(
                    f"node {node.name!r} of graph {graph.id!r} is a nested {type(node.executor).__name__}; "
                    "only Agent nodes can run as separate steps"
                )
        self.graph = graph
        self.store = CursorStore(graph.session_manager, "graph", graph.id)

    def node_agent(self, name: str) -> Agent:
        """The Agent of node `name` (a clear error for a name this graph does not have)."""
        if name not in self.graph.nodes:
            raise ValueError(
                f"graph {self.graph.id!r} has no node {name!r}: {sorted(self.graph.nodes)}"
            )
        executor = self.graph.nodes[name].executor
        assert isinstance(executor, Agent)  # checked in __init__
        return executor

    def handed_off(self, name: str) -> bool:
        """Graph nodes never hand off: a paused node simply continues in its next slice."""
        return False

    def _load(self) -> tuple[GraphCursor | None, GraphState | None]:
        cursor = self.store.load(GraphCursor)
        return cursor, (self.graph._restore(cursor) if cursor is not None else None)

    def _execution(self, state: GraphState, answers: Task | None) -> GraphExecution:
        elapsed = _elapsed_since(self.store.created_at(state.run_id))
        started = time.perf_counter() - elapsed
        return GraphExecution(self.graph, state, self.store, {}, answers, started)

    def plan(self, task: Task, invocation_id: str) -> StepOutcome:
        """Start a run for `task` (or continue the stored one) and name the nodes to run now."""
        cursor, state = self._load()
        if state is None or not _continues(cursor, invocation_id):
            state = GraphState(
                task=task,
                run_id=_run_id(),
                invocation_id=invocation_id,
                accumulated_metrics=empty_metrics(),
            )
            state.next_nodes = {name: [] for name in self.graph.entry_points}
        elif state.status in (Status.COMPLETED, Status.FAILED) and not state.resumable:
            return self._outcome(state)  # this job's run already ended
        if state.status == Status.COMPLETED:
            return self._outcome(state)
        execution = self._execution(state, None)
        if not state.next_nodes:
            execution.select_next()
        error = execution.limit_error(state.next_nodes) if state.next_nodes else None
        if (
            error is None
            and execution.deadline is not None
            and time.perf_counter() >= execution.deadline
        ):
            error = execution.timeout_message()
        if error is not None:
            state.status, state.error = Status.FAILED, error
        elif not state.next_nodes:
            state.status, state.error = Status.COMPLETED, None
        else:
            state.status, state.error = Status.EXECUTING, None
        self.store.save(self.graph.cursor_of(state))
        return self._outcome(state)

    def node_call(
        self, name: str, answers: Task | None = None, node_started_at: float | None = None
    ) -> NodeCall:
        """How to invoke node `name` of the current batch, exactly as `graph(task)` would."""
        _, state = self._load()
        if state is None or name not in state.next_nodes:
            raise ValueError(
                f"node {name!r} is not in the current batch of graph {self.graph.id!r}"
                + (
                    f" (batch: {list(state.next_nodes)})"
                    if state is not None
                    else " (no run stored)"
                )
            )
        execution = self._execution(state, answers)
        return _shorten(execution.node_call(name, state.next_nodes[name]), node_started_at)

    def fold(self, batch: int, reports: dict[str, dict[str, Any]]) -> StepOutcome:
        """Record the batch's node reports, fire edges and pick the next batch (once per batch).

        A report is what ran the node says about it (see `node_result_from_report`); the
        answer text is read from the node agent's own session, never carried.
        """
        results = {
            name: node_result_from_report(self.node_agent(name), r) for name, r in reports.items()
        }
        _, state = self._load()
        if state is None:
            raise ValueError(f"graph {self.graph.id!r} has no stored run to fold results into")
        if state.execution_count != batch or state.status != Status.EXECUTING:
            return self._outcome(state)  # already folded (a retried fold): nothing changes
        execution = self._execution(state, None)
        outcomes = {name: execution.record(name, result) for name, result in results.items()}
        execution.finish_batch(outcomes)
        self.store.save(self.graph.cursor_of(state))
        return self._outcome(state)

    def _outcome(self, state: GraphState) -> StepOutcome:
        result = self.graph.result_of(state)
        return StepOutcome(
            status=state.status,
            nodes=list(state.next_nodes) if state.status == Status.EXECUTING else [],
            batch=state.execution_count,
            error=state.error,
            text=result.text if state.status == Status.COMPLETED else "",
            interrupts=[
                {**interrupt_dict(i), "node": name}
                for name in state.interrupted_nodes
                for i in state.results[name].interrupts
            ],
            node_status={name: str(r.status) for name, r in state.results.items()},
        )


class SwarmSteps:
    """A Swarm's run as steps: each batch is the one current node; a handoff moves the cursor."""

    kind = "swarm"

    def __init__(self, swarm: Swarm) -> None:
        if swarm.session_manager is None:
            raise ValueError(
                f"swarm {swarm.id!r} needs a session manager to run as steps (its cursor is the state)"
            )
        self.swarm = swarm
        self.store = CursorStore(swarm.session_manager, "swarm", swarm.id)

    def node_agent(self, name: str) -> Agent:
        """The Agent of node `name`."""
        if name not in self.swarm.nodes:
            raise ValueError(
                f"swarm {self.swarm.id!r} has no node {name!r}: {sorted(self.swarm.nodes)}"
            )
        return self.swarm.nodes[name]

    def handed_off(self, name: str) -> bool:
        """Whether the current node `name` handed off in its execution (its pause means done)."""
        _, state = self._load()
        if state is None or state.current_node != name:
            return False
        return Handoff.from_state(self.node_agent(name), self.swarm.node_base_id(state)) is not None

    def _load(self) -> tuple[SwarmCursor | None, SwarmState | None]:
        cursor = self.store.load(SwarmCursor)
        return cursor, (SwarmState.from_cursor(cursor) if cursor is not None else None)

    def _deadline(self, state: SwarmState) -> float | None:
        if self.swarm.execution_timeout is None:
            return None
        elapsed = _elapsed_since(self.store.created_at(state.run_id))
        return time.perf_counter() - elapsed + self.swarm.execution_timeout

    def plan(self, task: Task, invocation_id: str) -> StepOutcome:
        """Start a run (or continue the stored one); the batch is the current node."""
        cursor, state = self._load()
        if state is None or not _continues(cursor, invocation_id):
            state = SwarmState(
                task=task,
                run_id=_run_id(),
                current_node=self.swarm.entry_point,
                invocation_id=invocation_id,
            )
        elif state.status in (Status.COMPLETED, Status.FAILED) and not state.resumable:
            return self._outcome(state)
        if state.status == Status.COMPLETED:
            return self._outcome(state)
        deadline = self._deadline(state)
        if state.execution_count >= self.swarm.max_iterations:
            state.status, state.resumable = Status.FAILED, False
            state.error = (
                f"swarm {self.swarm.id!r} reached max_iterations={self.swarm.max_iterations}"
            )
        elif deadline is not None and time.perf_counter() >= deadline:
            state.status, state.error = Status.FAILED, self.swarm.timeout_message()
        else:
            state.status, state.error = Status.EXECUTING, None
        self.store.save(state.to_cursor(self.swarm.id))
        return self._outcome(state)

    def node_call(
        self, name: str, answers: Task | None = None, node_started_at: float | None = None
    ) -> NodeCall | None:
        """How to invoke the current node; None if it already handed off (it is not re-run)."""
        _, state = self._load()
        if state is None or state.current_node != name:
            raise ValueError(
                f"node {name!r} is not the current node of swarm {self.swarm.id!r}"
                + (f" ({state.current_node!r} is)" if state is not None else " (no run stored)")
            )
        call, _ = self.swarm.prepare_node(state, {}, answers, self._deadline(state))
        return _shorten(call, node_started_at) if call is not None else None

    def fold(self, batch: int, reports: dict[str, dict[str, Any]]) -> StepOutcome:
        """Record the current node's report and follow its handoff (once per batch)."""
        results = {
            name: node_result_from_report(self.node_agent(name), r) for name, r in reports.items()
        }
        _, state = self._load()
        if state is None:
            raise ValueError(f"swarm {self.swarm.id!r} has no stored run to fold results into")
        if state.execution_count != batch or state.status != Status.EXECUTING:
            return self._outcome(state)
        result = results.get(state.current_node)
        if result is None:
            raise ValueError(
                f"no result for the current node {state.current_node!r} of swarm {self.swarm.id!r}"
            )
        handoff = self.swarm.node_handoff(state, result)
        self.swarm.record(state, result, handoff)
        if state.status == Status.EXECUTING and handoff is None:
            state.status = result.status
        self.store.save(state.to_cursor(self.swarm.id))
        return self._outcome(state)

    def _outcome(self, state: SwarmState) -> StepOutcome:
        current = state.results.get(state.current_node)
        interrupted = state.status == Status.INTERRUPTED and current is not None
        return StepOutcome(
            status=state.status,
            nodes=[state.current_node] if state.status == Status.EXECUTING else [],
            batch=state.execution_count,
            error=state.error,
            text=current.text if state.status == Status.COMPLETED and current is not None else "",
            interrupts=[
                {**interrupt_dict(i), "node": state.current_node} for i in current.interrupts
            ]
            if interrupted and current is not None
            else [],
            node_status={name: str(r.status) for name, r in state.results.items()},
        )


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


def steps_for(orchestrator: MultiAgentBase) -> GraphSteps | SwarmSteps:
    """The step API of a Graph or a Swarm."""
    if isinstance(orchestrator, Graph):
        return GraphSteps(orchestrator)
    if isinstance(orchestrator, Swarm):
        return SwarmSteps(orchestrator)
    raise TypeError(f"cannot run a {type(orchestrator).__name__} as steps: only Graph and Swarm")


def _run_id() -> str:
    import uuid

    return uuid.uuid4().hex[:12]


__all__ = ["GraphSteps", "StepOutcome", "SwarmSteps", "node_result_from_report", "steps_for"]
