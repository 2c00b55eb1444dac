"""One `graph(task)` call: batches of ready nodes, run in parallel, folded into the state.

After every node completion the cursor is written (multi_agent.json), so a crash loses at
most the nodes that were still running; they are re-invoked with the same invocation ids.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

from elsai.interrupt.model import interrupt_dict
from elsai.multiagent.base import (
    NodeResult,
    Status,
    Task,
    add_metrics,
    add_usage,
    compose_input,
    task_text,
)
from elsai.multiagent.graph.state import GraphState
from elsai.multiagent.invoke import NodeCall, route_responses, run_node
from elsai.multiagent.persistence import CursorStore

if TYPE_CHECKING:
    from elsai.multiagent.graph.graph import Graph

logger: logging.Logger = logging.getLogger("elsai.multiagent")
_STOPS = (Status.FAILED, Status.INTERRUPTED, Status.PAUSED)  # in order of precedence


class GraphExecution:
    """One `graph(task)` call: runs batches of ready nodes until none is left or one stops."""

    def __init__(
        self,
        graph: Graph,
        state: GraphState,
        store: CursorStore,
        invocation_state: dict[str, Any],
        answers: Task | None,
        started: float,
    ) -> None:
        self.graph: Graph = graph
        self.state: GraphState = state
        self.store: CursorStore = store
        self.invocation_state = invocation_state
        self.answers = answers
        timeout = graph.config.execution_timeout
        self.deadline: float | None = started + timeout if timeout is not None else None
        self.errors: list[str] = []

    async def run(self) -> None:
        """Run batches of ready nodes until none are left or the run stops."""
        state = self.state
        if not state.next_nodes:
            self.select_next()  # a resumed run that stopped between batches
            if not state.next_nodes:
                return self._stop(Status.COMPLETED, None)
        while state.next_nodes:
            batch = dict(state.next_nodes)
            error = self.limit_error(batch)
            if error is not None:
                return self._stop(Status.FAILED, error)
            if self.deadline is not None and time.perf_counter() >= self.deadline:
                return self._stop(Status.FAILED, self.timeout_message())
            await self._run_batch(batch)
            if state.status != Status.EXECUTING:
                return None
        return None

    def limit_error(self, batch: dict[str, list[str]]) -> str | None:
        """Why `batch` may not start (max_node_executions), or None; a limit ends the run for good."""
        limit = self.graph.config.max_node_executions
        if limit is None or self.state.execution_count + len(batch) <= limit:
            return None
        self.state.resumable = False
        return (
            f"graph {self.graph.id!r} reached max_node_executions={limit} "
            f"({self.state.execution_count} executions so far; next: {', '.join(batch)})"
        )

    def _stop(self, status: Status, error: str | None) -> None:
        self.state.status, self.state.error = status, error
        if error:
            logger.error("%s", error)
        self.store.save(self.graph.cursor_of(self.state))

    def timeout_message(self) -> str:
        """The error of a run that ran out of its execution_timeout."""
        return f"graph {self.graph.id!r} execution timed out after {self.graph.config.execution_timeout}s (execution_timeout)"

    async def _run_batch(self, batch: dict[str, list[str]]) -> None:
        tasks = {
            name: asyncio.ensure_future(run_node(self.node_call(name, sources)))
            for name, sources in batch.items()
        }
        pending = set(tasks.values())
        outcomes: dict[str, Status] = {}
        try:
            while pending:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for name, task in tasks.items():
                    if task in done:
                        outcomes[name] = self.record(name, task.result())
                if not pending:
                    self.finish_batch(outcomes)
                self.store.save(self.graph.cursor_of(self.state))
        except BaseException:
            for task in pending:
                task.cancel()
            raise

    def node_call(self, name: str, sources: list[str]) -> NodeCall:
        """How to invoke node `name` now: its input, invocation id and time budget."""
        state, graph = self.state, self.graph
        executor = graph.nodes[name].executor
        count = state.node_executions.get(name, 0)
        invocation_id = f"{graph.id}:{state.run_id}:{name}:{count + 1}"
        node_input: Task
        if self.answers is not None and name in state.interrupted_nodes:
            interrupts = [interrupt_dict(i) for i in state.results[name].interrupts]
            node_input = route_responses(self.answers, interrupts)
            invocation_id += f":answer{state.interrupt_rounds.get(name, 0)}"
        else:
            node_input = self._input(sources)
        if count > 0:
            graph.reset_node(name)  # a revisit starts afresh (reset_on_revisit)
        timeout, message = self._timeout_for(name)
        return NodeCall(
            name=name,
            executor=executor,
            input=node_input,
            invocation_id=invocation_id,
            invocation_state={
                **self.invocation_state,
                "graph": graph,
                "graph_state": state,
                "node_name": name,
            },
            timeout=timeout,
            timeout_message=message,
        )

    def _input(self, sources: list[str]) -> Task:
        """Entry nodes get the task; others the task plus their upstream nodes' outputs."""
        state = self.state
        if not sources:
            return state.task
        parts = [f"Original task:\n{task_text(state.task)}", "Inputs from previous nodes:"]
        parts += [f"From {source}:\n{state.result_text(source)}" for source in sources]
        return compose_input("\n\n".join(parts), state.task)

    def _timeout_for(self, name: str) -> tuple[float | None, str]:
        node_timeout = self.graph.config.node_timeout
        message = f"node {name!r} timed out after {node_timeout}s (node_timeout)"
        if self.deadline is None:
            return node_timeout, message
        remaining = max(self.deadline - time.perf_counter(), 0.001)
        if node_timeout is None or remaining < node_timeout:
            return remaining, f"{self.timeout_message()} while node {name!r} was running"
        return node_timeout, message

    def record(self, name: str, result: NodeResult) -> Status:
        """Fold one finished node execution into the state; fire its edges if it completed."""
        state = self.state
        state.results[name] = result
        state.execution_count += 1
        state.execution_order.append(name)
        state.mark(name, result.status)
        add_usage(state.accumulated_usage, result.usage)
        add_metrics(state.accumulated_metrics, result.metrics)
        if result.status == Status.INTERRUPTED:
            state.interrupt_rounds[name] = state.interrupt_rounds.get(name, 0) + 1
        if result.status == Status.FAILED:
            self.errors.append(f"node {name!r} failed: {result.error}")
        if result.status != Status.COMPLETED:
            return result.status
        fired: list[str] = []
        for edge in self.graph.topology.outgoing[name]:
            try:
                if edge.should_traverse(state):
                    fired.append(edge.to_node)
            except Exception as exc:  # a bug in user code: fail the run, retry the node on resume
                logger.error(
                    "edge condition %s -> %s raised", edge.from_node, edge.to_node, exc_info=exc
                )
                self.errors.append(
                    f"edge condition {edge.from_node!r} -> {edge.to_node!r} raised {type(exc).__name__}: {exc}"
                )
                return Status.FAILED
        state.node_executions[name] = state.node_executions.get(name, 0) + 1
        state.interrupt_rounds.pop(name, None)
        state.next_nodes.pop(name, None)
        for target in fired:
            sources = state.triggers.setdefault(target, [])
            if name not in sources:
                sources.append(name)
        return Status.COMPLETED

    def finish_batch(self, outcomes: dict[str, Status]) -> None:
        """After the last node of a batch: stop (failed / interrupted / paused) or pick the next batch."""
        state = self.state
        for status in _STOPS:
            if status in outcomes.values():
                state.status = status
                state.error = "; ".join(self.errors) if status == Status.FAILED else None
                if state.error:
                    logger.error("graph %r failed: %s", self.graph.id, state.error)
                return
        self.select_next()
        if not state.next_nodes:
            state.status = Status.COMPLETED

    def select_next(self) -> None:
        """Move the triggered nodes that may run now into `next_nodes`.

        Nodes already there (waiting for a person, in a stepped run) count as busy: their
        dependants wait for them.
        """
        state = self.state
        for name in self.graph.topology.select_ready(state.triggers, busy=state.next_nodes):
            state.next_nodes[name] = state.triggers.pop(name)
