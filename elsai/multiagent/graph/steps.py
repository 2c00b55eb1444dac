"""A Graph's run as plan / node_call / fold steps (see `elsai.multiagent.step_types`).

Each batch is the graph's ready nodes; the fold records their results with the in-process
run's own code (`GraphExecution`), fires the edges and plans the next batch.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from elsai.agent.agent import Agent
from elsai.interrupt.model import interrupt_dict
from elsai.multiagent.base import Status, Task, empty_metrics
from elsai.multiagent.graph.execution import GraphExecution
from elsai.multiagent.graph.state import GraphState
from elsai.multiagent.invoke import NodeCall
from elsai.multiagent.persistence import CursorStore, GraphCursor
from elsai.multiagent.step_types import (
    OrchestratorSteps,
    StepOutcome,
    continues,
    elapsed_since,
    new_run_id,
    shorten,
)

if TYPE_CHECKING:
    from elsai.multiagent.graph.graph import Graph


class GraphSteps(OrchestratorSteps):
    """A Graph's run as steps: each batch is the ready nodes; a fold fires their edges."""

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
        self.store: CursorStore = CursorStore(graph.session_manager, "graph", graph.id)

    def shape(self) -> tuple[list[str], list[str]]:
        """The graph's nodes and edges (a conditional edge is marked ``?``)."""
        edges = sorted(
            f"{e.from_node} -> {e.to_node}{'?' if e.condition is not None else ''}"
            for e in self.graph.edges
        )
        return sorted(self.graph.nodes), edges

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
        return cursor, (self.graph.state_of(cursor) if cursor is not None else None)

    def _execution(self, state: GraphState, answers: Task | None) -> GraphExecution:
        elapsed = elapsed_since(self.store.created_at(state.run_id))
        started = time.perf_counter() - elapsed
        return GraphExecution(self.graph, state, self.store, {}, answers, started)

    def plan(self, task: Task, invocation_id: str, answered: Collection[str] = ()) -> StepOutcome:
        """Start a run for `task` (or continue the stored one) and name the nodes to run now.

        A node waiting for a person stays out of the batch until it is `answered`; every
        node that does not depend on it runs meanwhile. Only waits left: INTERRUPTED.
        """
        cursor, state = self._load()
        if state is None or not continues(cursor, invocation_id):
            state = GraphState(
                task=task,
                run_id=new_run_id(),
                invocation_id=invocation_id,
                accumulated_metrics=empty_metrics(),
            )
            state.next_nodes = {name: [] for name in self.graph.entry_points}
        elif state.status in (Status.COMPLETED, Status.FAILED) and not state.resumable:
            return self._outcome(state)  # this job's run already ended
        if state.status == Status.COMPLETED:
            return self._outcome(state)
        execution = self._execution(state, None)
        execution.select_next()
        waiting = [n for n in _waiting(state) if n not in answered]
        batch = {n: s for n, s in state.next_nodes.items() if n not in waiting}
        error = execution.limit_error(batch) if batch else None
        late = execution.deadline is not None and time.perf_counter() >= execution.deadline
        if error is None and batch and late:
            error = execution.timeout_message()
        if error is not None:
            state.status, state.error = Status.FAILED, error
        elif batch:
            state.status, state.error = Status.EXECUTING, None
        else:
            state.status = Status.INTERRUPTED if waiting else Status.COMPLETED
            state.error = None
        self.store.save(self.graph.cursor_of(state))
        return self._outcome(state, list(batch))

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
        return shorten(execution.node_call(name, state.next_nodes[name]), node_started_at)

    def fold(self, batch: int, reports: dict[str, dict[str, Any]]) -> StepOutcome:
        """Record the batch's node reports, fire edges and pick the next batch (once per batch).

        An interrupted node does not stop the run: it waits (its dependants with it) while
        the nodes that do not depend on it go on; a failed node still ends the run.
        """
        results = self.node_results(reports)
        _, state = self._load()
        if state is None:
            raise ValueError(f"graph {self.graph.id!r} has no stored run to fold results into")
        if state.execution_count != batch or state.status != Status.EXECUTING:
            return self._outcome(state)  # already folded (a retried fold): nothing changes
        execution = self._execution(state, None)
        outcomes = {name: execution.record(name, result) for name, result in results.items()}
        if Status.FAILED in outcomes.values():
            execution.finish_batch(outcomes)
        else:
            execution.select_next()
            waiting = _waiting(state)
            if any(n not in waiting for n in state.next_nodes):
                state.status = Status.EXECUTING
            else:
                state.status = Status.INTERRUPTED if waiting else Status.COMPLETED
        self.store.save(self.graph.cursor_of(state))
        return self._outcome(state, [n for n in state.next_nodes if n not in _waiting(state)])

    def _outcome(self, state: GraphState, batch: list[str] | None = None) -> StepOutcome:
        result = self.graph.result_of(state)
        running = list(state.next_nodes) if batch is None else batch
        return StepOutcome(
            status=state.status,
            nodes=running if state.status == Status.EXECUTING else [],
            batch=state.execution_count,
            error=state.error,
            text=result.text if state.status == Status.COMPLETED else "",
            interrupts=[
                {**interrupt_dict(i), "node": name}
                for name in state.interrupted_nodes
                for i in state.results[name].interrupts
            ],
            node_status={name: str(r.status) for name, r in state.results.items()},
            orchestrator_id=self.graph.id,
            run_id=state.run_id,
            started_at=self.store.created_at(state.run_id),
        )


def _waiting(state: GraphState) -> list[str]:
    """Nodes of the next batch whose last execution asked a person (in batch order)."""
    return [n for n in state.next_nodes if n in state.interrupted_nodes]


__all__ = ["GraphSteps"]
