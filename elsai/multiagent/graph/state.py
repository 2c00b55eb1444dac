"""The graph's shape (nodes, edges) and the state of one run (what edge conditions see)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from elsai.multiagent.base import MultiAgentResult, NodeResult, Status, Task
from elsai.multiagent.invoke import Executor
from elsai.types import Usage, empty_usage


@dataclass(frozen=True)
class GraphNode:
    """A named executor (an agent or a nested orchestrator) in a graph."""

    name: str
    executor: Executor


@dataclass(frozen=True)
class GraphEdge:
    """A directed edge; `condition` decides, from the graph state, whether it is taken."""

    from_node: str
    to_node: str
    #: Called with the GraphState when `from_node` completes; None = always traverse.
    condition: Callable[[GraphState], bool] | None = None

    def should_traverse(self, state: GraphState) -> bool:
        """Whether the edge is taken now (always, without a condition)."""
        return True if self.condition is None else bool(self.condition(state))


@dataclass
class GraphState:
    """One run's state. Edge conditions receive it; it is what multi_agent.json persists.

    - `completed_nodes` / `failed_nodes`: names, in order of first completion / failure;
    - `results`: the latest NodeResult of each node that ran in this run;
    - `execution_order`: every node execution that finished, in order (a node repeats in cycles).
    """

    task: Task
    run_id: str
    #: The caller's invocation id of this run (see MultiAgentBase.invoke_async), if any.
    invocation_id: str | None = None
    status: Status = Status.PENDING
    completed_nodes: list[str] = field(default_factory=list)
    failed_nodes: list[str] = field(default_factory=list)
    interrupted_nodes: list[str] = field(default_factory=list)
    results: dict[str, NodeResult] = field(default_factory=dict)
    execution_order: list[str] = field(default_factory=list)
    execution_count: int = 0
    #: Nodes to run next, each with the upstream nodes feeding its input ([] = the task).
    next_nodes: dict[str, list[str]] = field(default_factory=dict)
    #: Edges that fired into nodes that have not run since: target -> sources.
    triggers: dict[str, list[str]] = field(default_factory=dict)
    node_executions: dict[str, int] = field(default_factory=dict)
    interrupt_rounds: dict[str, int] = field(default_factory=dict)
    accumulated_usage: Usage = field(default_factory=empty_usage)
    accumulated_metrics: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    #: False once the run stopped on a limit: the next call starts a fresh run.
    resumable: bool = True

    def result_text(self, name: str) -> str:
        """The latest answer text of node `name` (empty if it has not run)."""
        result = self.results.get(name)
        return result.text if result is not None else ""

    def mark(self, name: str, status: Status) -> None:
        """Record `name`'s latest status in the completed / failed / interrupted lists."""
        for group, wanted in (
            (self.completed_nodes, Status.COMPLETED),
            (self.failed_nodes, Status.FAILED),
            (self.interrupted_nodes, Status.INTERRUPTED),
        ):
            if status == wanted and name not in group:
                group.append(name)
            elif status != wanted and name in group and wanted != Status.COMPLETED:
                group.remove(name)


@dataclass
class GraphResult(MultiAgentResult):
    """What `graph(task)` returns."""

    execution_order: list[str] = field(default_factory=list)
    total_nodes: int = 0
    #: Number of distinct nodes that completed in this run.
    completed_nodes: int = 0
    #: Number of distinct nodes whose latest execution failed.
    failed_nodes: int = 0
    interrupted_nodes: list[str] = field(default_factory=list)
    entry_points: list[str] = field(default_factory=list)
    #: Nodes whose outputs form the graph's output (`text`): completed nodes without
    #: outgoing edges, or else the last node that completed.
    output_nodes: list[str] = field(default_factory=list)
    state: GraphState | None = None

    @property
    def text(self) -> str:
        """The answers of the output nodes, joined by blank lines."""
        return "\n\n".join(self.results[n].text for n in self.output_nodes if n in self.results)

    def summary(self) -> dict[str, Any]:
        """The run in a small JSON-able dict, for logs and reports."""
        return {
            "status": str(self.status),
            "execution_order": list(self.execution_order),
            "completed_nodes": self.completed_nodes,
            "failed_nodes": self.failed_nodes,
            "error": self.error,
        }
