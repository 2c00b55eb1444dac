"""Graph: runs agents along edges; ready nodes run in parallel; the cursor survives crashes.

Durability is two-layered. This module keeps the orchestrator cursor (multi_agent.json:
which nodes completed, what runs next) and writes it at the start of a call and after
every node completion. Each node agent keeps its own session and checkpoint: a node that
crashed mid-tool is re-invoked with its original input and the same invocation id
("<graph id>:<run id>:<node>:<n>"), so its prompt is not appended twice and the agent
resumes from its own bookmark. A node that completed but whose completion never reached
multi_agent.json is re-invoked the same way and returns its stored answer without a model
call (its conversation already ends with that answer).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from elsai.agent.agent import Agent
from elsai.multiagent.base import (
    MultiAgentBase,
    Status,
    Task,
    empty_metrics,
    keep_live_results,
    usage_dict,
)
from elsai.multiagent.graph.execution import GraphExecution
from elsai.multiagent.graph.state import GraphEdge, GraphNode, GraphResult, GraphState
from elsai.multiagent.graph.steps import GraphSteps
from elsai.multiagent.graph.topology import Topology
from elsai.multiagent.invoke import has_interrupt_responses
from elsai.multiagent.persistence import (
    CursorStore,
    EdgeRecord,
    GraphCursor,
    NodeRecord,
    decode_task,
    encode_task,
)
from elsai.telemetry.spans import record_run, run_span
from elsai.types import Message

if TYPE_CHECKING:
    from elsai.session.manager import SessionManager

logger: logging.Logger = logging.getLogger("elsai.multiagent")


@dataclass(frozen=True)
class GraphConfig:
    """A graph's fixed settings, as checked by `GraphBuilder.build`."""

    graph_id: str
    entry_points: list[str]
    session_manager: SessionManager | None = None
    max_node_executions: int | None = None
    execution_timeout: float | None = None
    node_timeout: float | None = None
    reset_on_revisit: bool = False


class Graph(MultiAgentBase):
    """Build with `GraphBuilder`. `graph(task)` returns a `GraphResult`."""

    def __init__(
        self, nodes: dict[str, GraphNode], edges: list[GraphEdge], config: GraphConfig
    ) -> None:
        self.nodes = nodes
        self.edges = edges
        self.config = config
        self.id: str = config.graph_id
        self.session_manager: SessionManager | None = config.session_manager
        self.topology: Topology = Topology(list(nodes), edges)
        self.state: GraphState | None = None  # of the latest call
        self._lock = threading.Lock()
        self._initial: dict[str, tuple[list[Message], dict[str, Any]]] = {
            n.name: (list(n.executor.messages), n.executor.state.to_dict())
            for n in nodes.values()
            if config.reset_on_revisit and isinstance(n.executor, Agent)
        }

    def reset_node(self, name: str) -> None:
        """Put node `name`'s agent back to its messages and state at build time.

        Only with `reset_on_revisit`: a node that runs again then starts afresh. Nothing
        happens for other graphs or for nodes that are not agents.
        """
        initial = self._initial.get(name)
        executor = self.nodes[name].executor
        if initial is not None and isinstance(executor, Agent):
            messages, agent_state = initial
            executor.messages[:] = list(messages)
            executor.state.replace_all(agent_state)

    @property
    def entry_points(self) -> list[str]:
        """The nodes a new run starts from."""
        return list(self.config.entry_points)

    def __call__(self, task: Task, **kwargs: Any) -> GraphResult:
        """Run the graph to its end (see `invoke_async`)."""
        return super().__call__(task, **kwargs)  # type: ignore[return-value]

    async def invoke_async(
        self,
        task: Task,
        *,
        invocation_state: dict[str, Any] | None = None,
        invocation_id: str | None = None,
        **kwargs: Any,
    ) -> GraphResult:
        """Run the graph, or continue its unfinished run stored in multi_agent.json.

        When the stored run was interrupted, `task` is passed to the interrupted node(s)
        (e.g. `[{"interruptResponse": {...}}]` blocks), not used as a new task.
        """
        with self._exclusive("graph", self._lock, kwargs):
            return await self._invoke(task, dict(invocation_state or {}), invocation_id)

    async def _invoke(
        self, task: Task, invocation_state: dict[str, Any], invocation_id: str | None
    ) -> GraphResult:
        started = time.perf_counter()
        store = CursorStore(self.session_manager, "graph", self.id)
        cursor = store.load(GraphCursor)
        answers: Task | None = None
        if cursor is not None and cursor.completed_call(invocation_id):
            self.state = self.state_of(cursor)  # this exact call already completed: its result
            return self._result(self.state, time.perf_counter() - started, True)
        resumed = cursor is not None and cursor.continuable
        if cursor is not None and resumed:
            state = self.state_of(cursor)
            if cursor.status == Status.INTERRUPTED or (
                cursor.interrupted_nodes and has_interrupt_responses(task)
            ):
                answers = task
            elif encode_task(task) != cursor.task:
                logger.warning(
                    "graph %r continues its unfinished run (status %s) from %s; the new task is ignored",
                    self.id,
                    cursor.status,
                    store.where(),
                )
            logger.info(
                "graph %r resumes run %s at %s", self.id, state.run_id, list(state.next_nodes)
            )
        else:
            state = GraphState(
                task=task,
                run_id=uuid.uuid4().hex[:12],
                invocation_id=invocation_id,
                accumulated_metrics=empty_metrics(),
            )
            state.next_nodes = {name: [] for name in self.config.entry_points}
        state.status, state.error = Status.EXECUTING, None
        self.state = state
        store.save(self.cursor_of(state))
        execution = GraphExecution(self, state, store, invocation_state, answers, started)
        executors = [node.executor for node in self.nodes.values()]
        with run_span("graph", self.id, state.run_id, executors) as span:
            await execution.run()
            record_run(span, str(state.status), state.error)
        return self._result(state, time.perf_counter() - started, resumed)

    def as_steps(self) -> GraphSteps:
        """This graph's run as plan / node_call / fold steps (Agent nodes only)."""
        return GraphSteps(self)

    # -- cursor <-> state --------------------------------------------------------------------

    def cursor_of(self, state: GraphState) -> GraphCursor:
        """The multi_agent.json record of `state`, written as each node finishes."""
        return GraphCursor(
            id=self.id,
            run_id=state.run_id,
            invocation_id=state.invocation_id,
            status=state.status,
            task=encode_task(state.task),
            completed_nodes=list(state.completed_nodes),
            failed_nodes=list(state.failed_nodes),
            interrupted_nodes=list(state.interrupted_nodes),
            node_results={name: NodeRecord.of(result) for name, result in state.results.items()},
            next_nodes=list(state.next_nodes),
            next_inputs={name: list(sources) for name, sources in state.next_nodes.items()},
            triggers={name: list(sources) for name, sources in state.triggers.items()},
            execution_order=list(state.execution_order),
            execution_count=state.execution_count,
            node_executions=dict(state.node_executions),
            interrupt_rounds=dict(state.interrupt_rounds),
            accumulated_usage=usage_dict(state.accumulated_usage),
            accumulated_metrics=dict(state.accumulated_metrics),
            error=state.error,
            resumable=state.resumable,
            edges=[
                EdgeRecord(
                    from_node=e.from_node, to_node=e.to_node, conditional=e.condition is not None
                )
                for e in self.edges
            ],  # fmt: skip
        )

    def state_of(self, cursor: GraphCursor) -> GraphState:
        """The run state a stored cursor stands for (the inverse of `cursor_of`).

        Raises ValueError when the cursor names nodes this graph does not have.
        """
        unknown = (set(cursor.next_nodes) | set(cursor.triggers) | set(cursor.node_results)) - set(
            self.nodes
        )
        if unknown:
            raise ValueError(
                f"the stored run of graph {self.id!r} names node(s) {sorted(unknown)} that this graph does not have; "
                "rebuild the graph with the same node names to continue it"
            )
        state = GraphState(
            task=decode_task(cursor.task),
            run_id=cursor.run_id,
            invocation_id=cursor.invocation_id,
            status=cursor.status,
            completed_nodes=list(cursor.completed_nodes),
            failed_nodes=list(cursor.failed_nodes),
            interrupted_nodes=list(cursor.interrupted_nodes),
            results={name: record.to_result() for name, record in cursor.node_results.items()},
            execution_order=list(cursor.execution_order),
            execution_count=cursor.execution_count,
            next_nodes={name: list(cursor.next_inputs.get(name, [])) for name in cursor.next_nodes},
            triggers={name: list(sources) for name, sources in cursor.triggers.items()},
            node_executions=dict(cursor.node_executions),
            interrupt_rounds=dict(cursor.interrupt_rounds),
            accumulated_usage=dict(cursor.accumulated_usage),  # type: ignore[arg-type]
            accumulated_metrics={**empty_metrics(), **cursor.accumulated_metrics},
        )
        if self.state is not None and self.state.run_id == state.run_id:
            keep_live_results(state.results, self.state.results)
        return state

    def result_of(self, state: GraphState) -> GraphResult:
        """The result `state` stands for (its output nodes' answers), as a call would return it."""
        return self._result(state, 0.0, True)

    def _result(self, state: GraphState, seconds: float, resumed: bool) -> GraphResult:
        sinks = self.topology.sinks()
        outputs = [n for n in state.completed_nodes if n in sinks]
        if not outputs:
            done = [
                n
                for n in state.execution_order
                if state.results.get(n) and state.results[n].status == Status.COMPLETED
            ]
            outputs = done[-1:]
        return GraphResult(
            status=state.status,
            results=dict(state.results),
            accumulated_usage=dict(state.accumulated_usage),  # type: ignore[arg-type]
            accumulated_metrics=dict(state.accumulated_metrics),
            execution_count=state.execution_count,
            execution_time=seconds,
            error=state.error,
            interrupts=[i for n in state.interrupted_nodes for i in state.results[n].interrupts],
            resumed=resumed,
            execution_order=list(state.execution_order),
            total_nodes=len(self.nodes),
            completed_nodes=len(state.completed_nodes),
            failed_nodes=len(state.failed_nodes),
            interrupted_nodes=list(state.interrupted_nodes),
            entry_points=self.entry_points,
            output_nodes=outputs,
            state=state,
        )

    def __repr__(self) -> str:
        return f"Graph(id={self.id!r}, nodes={list(self.nodes)}, entry_points={self.entry_points})"
