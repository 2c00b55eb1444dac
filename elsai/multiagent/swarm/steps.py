"""A Swarm's run as plan / node_call / fold steps (see `elsai.multiagent.step_types`).

Each batch is the one current node; the fold records its result and follows its handoff,
with the in-process run's own code (`Swarm.record`, `Swarm.node_handoff`).
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from elsai.agent.agent import Agent
from elsai.interrupt.model import interrupt_dict
from elsai.multiagent.base import Status, Task
from elsai.multiagent.invoke import NodeCall
from elsai.multiagent.persistence import CursorStore, SwarmCursor
from elsai.multiagent.step_types import (
    OrchestratorSteps,
    StepOutcome,
    continues,
    elapsed_since,
    new_run_id,
    shorten,
)
from elsai.multiagent.swarm.handoff import Handoff
from elsai.multiagent.swarm.state import SwarmState

if TYPE_CHECKING:
    from elsai.multiagent.swarm.swarm import Swarm


class SwarmSteps(OrchestratorSteps):
    """A Swarm's run as steps: each batch is the one current node; a handoff moves the cursor."""

    kind = "swarm"

    def __init__(self, swarm: Swarm) -> None:
        if swarm.session_manager is None:
            raise ValueError(
                f"swarm {swarm.id!r} needs a session manager to run as steps (its cursor is the state)"
            )
        self.swarm = swarm
        self.store: CursorStore = CursorStore(swarm.session_manager, "swarm", swarm.id)

    def shape(self) -> tuple[list[str], list[str]]:
        """The swarm's nodes; its one fixed edge is the entry point (any node hands off to any)."""
        return sorted(self.swarm.nodes), [f"entry -> {self.swarm.entry_point}"]

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
        elapsed = elapsed_since(self.store.created_at(state.run_id))
        return time.perf_counter() - elapsed + self.swarm.execution_timeout

    def plan(self, task: Task, invocation_id: str, answered: Collection[str] = ()) -> StepOutcome:
        """Start a run (or continue the stored one); the batch is the current node.

        A current node that waits for a person runs again only once it is `answered`.
        """
        cursor, state = self._load()
        if state is None or not continues(cursor, invocation_id):
            state = SwarmState(
                task=task,
                run_id=new_run_id(),
                current_node=self.swarm.entry_point,
                invocation_id=invocation_id,
            )
        elif state.status in (Status.COMPLETED, Status.FAILED) and not state.resumable:
            return self._outcome(state)
        if state.status == Status.COMPLETED:
            return self._outcome(state)
        if state.status == Status.INTERRUPTED and state.current_node not in answered:
            return self._outcome(state)  # still waiting: nothing else may run in a Swarm
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
        return shorten(call, node_started_at) if call is not None else None

    def fold(self, batch: int, reports: dict[str, dict[str, Any]]) -> StepOutcome:
        """Record the current node's report and follow its handoff (once per batch)."""
        results = self.node_results(reports)
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
            orchestrator_id=self.swarm.id,
            run_id=state.run_id,
            started_at=self.store.created_at(state.run_id),
        )


__all__ = ["SwarmSteps"]
