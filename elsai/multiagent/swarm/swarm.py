"""Swarm: agents that pass the task along with `handoff_to_agent`, one at a time.

Each node execution has a stable invocation id ("<swarm id>:<run id>:<node>:<n>"). The
cursor (multi_agent.json) is written at the start of a call and after every node execution;
the node agents keep their own sessions and checkpoints. After a crash, a rebuilt swarm
re-invokes the current node with the same invocation id: mid-tool it resumes from the
agent's bookmark; if the node had already handed off (recorded in its agent state) it is
not invoked again and the handoff is taken as recorded.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from elsai.agent.agent import Agent
from elsai.ids import validate_id
from elsai.interrupt.model import interrupt_dict
from elsai.multiagent.base import (
    MultiAgentBase,
    NodeResult,
    Status,
    Task,
    add_metrics,
    add_usage,
    compose_input,
    keep_live_results,
    restored_agent_result,
    task_text,
)
from elsai.multiagent.invoke import NodeCall, has_interrupt_responses, route_responses, run_node
from elsai.multiagent.limits import int_at_least, positive_seconds
from elsai.multiagent.persistence import CursorStore, SwarmCursor, encode_task
from elsai.multiagent.swarm.handoff import Handoff, HandoffTool
from elsai.multiagent.swarm.nodes import check_nodes, entry_name
from elsai.multiagent.swarm.state import SwarmResult, SwarmState
from elsai.multiagent.swarm.steps import SwarmSteps
from elsai.telemetry.spans import record_run, run_span
from elsai.types import text_of

if TYPE_CHECKING:
    from elsai.session.manager import SessionManager

logger: logging.Logger = logging.getLogger("elsai.multiagent")


class Swarm(MultiAgentBase):
    """`swarm(task)` runs the entry agent; each handoff passes control to the named agent."""

    def __init__(
        self,
        nodes: Sequence[Agent],
        entry_point: Agent | str | None = None,
        session_manager: SessionManager | None = None,
        max_handoffs: int = 20,
        max_iterations: int = 20,
        execution_timeout: float | None = 900.0,
        node_timeout: float | None = 300.0,
        repetitive_handoff_detection_window: int = 8,
        repetitive_handoff_min_unique_agents: int = 3,
        *,
        swarm_id: str = "swarm",
    ) -> None:
        self.id: str = validate_id(swarm_id, "swarm id")
        self.nodes: dict[str, Agent] = check_nodes(nodes)
        self.entry_point: str = entry_name(self.nodes, entry_point)
        self.session_manager = session_manager
        self.max_handoffs: int = int_at_least(max_handoffs, "max_handoffs", 0)
        self.max_iterations: int = int_at_least(max_iterations, "max_iterations")
        self.execution_timeout: float | None = positive_seconds(
            execution_timeout, "execution_timeout"
        )
        self.node_timeout: float | None = positive_seconds(node_timeout, "node_timeout")
        self.detection_window: int = int_at_least(
            repetitive_handoff_detection_window, "repetitive_handoff_detection_window", 0
        )
        self.min_unique_agents: int = int_at_least(
            repetitive_handoff_min_unique_agents, "repetitive_handoff_min_unique_agents"
        )
        self.state: SwarmState | None = None
        self._lock = threading.Lock()
        for name, agent in self.nodes.items():
            peers = {
                other: a.config.description or ""
                for other, a in self.nodes.items()
                if other != name
            }
            agent.tool_registry.register(HandoffTool(name, peers))

    def __call__(self, task: Task, **kwargs: Any) -> SwarmResult:
        """Run the swarm to its end (see `invoke_async`)."""
        return super().__call__(task, **kwargs)  # type: ignore[return-value]

    async def invoke_async(
        self,
        task: Task,
        *,
        invocation_state: dict[str, Any] | None = None,
        invocation_id: str | None = None,
        **kwargs: Any,
    ) -> SwarmResult:
        """Run the swarm, or continue its unfinished run stored in multi_agent.json.

        When the stored run was interrupted, `task` goes to the interrupted agent (e.g.
        `[{"interruptResponse": {...}}]` blocks) instead of starting anything new.
        """
        with self._exclusive("swarm", self._lock, kwargs):
            return await self._invoke(task, dict(invocation_state or {}), invocation_id)

    async def _invoke(
        self, task: Task, invocation_state: dict[str, Any], invocation_id: str | None
    ) -> SwarmResult:
        started = time.perf_counter()
        deadline = started + self.execution_timeout if self.execution_timeout is not None else None
        store = CursorStore(self.session_manager, "swarm", self.id)
        cursor = store.load(SwarmCursor)
        if cursor is not None and cursor.completed_call(invocation_id):
            # This exact call already completed: its stored result.
            self.state = SwarmState.from_cursor(cursor)
            return self._result(self.state, time.perf_counter() - started, True)
        resumed = cursor is not None and cursor.continuable
        answers: Task | None = None
        if cursor is not None and resumed:
            state, answers = self._resume(cursor, task, store)
        else:
            state = SwarmState(
                task=task,
                run_id=uuid.uuid4().hex[:12],
                current_node=self.entry_point,
                invocation_id=invocation_id,
            )
        state.status, state.error = Status.EXECUTING, None
        self.state = state
        store.save(state.to_cursor(self.id))
        with run_span("swarm", self.id, state.run_id, self.nodes.values()) as span:
            await self._run_nodes(state, store, invocation_state, answers, deadline)
            record_run(span, str(state.status), state.error)
        return self._result(state, time.perf_counter() - started, resumed)

    def _resume(
        self, cursor: SwarmCursor, task: Task, store: CursorStore
    ) -> tuple[SwarmState, Task | None]:
        """The stored unfinished run, and `task` as interrupt answers if that run awaits them."""
        state = SwarmState.from_cursor(cursor)
        if self.state is not None and self.state.run_id == state.run_id:
            keep_live_results(state.results, self.state.results)
        if state.current_node not in self.nodes:
            raise ValueError(
                f"the stored run of swarm {self.id!r} is at unknown node {state.current_node!r}"
            )
        if cursor.status == Status.INTERRUPTED or (
            cursor.interrupt_rounds and has_interrupt_responses(task)
        ):
            return state, task
        if encode_task(task) != cursor.task:
            logger.warning(
                "swarm %r continues its unfinished run from %s; the new task is ignored",
                self.id,
                store.where(),
            )
        return state, None

    async def _run_nodes(
        self,
        state: SwarmState,
        store: CursorStore,
        invocation_state: dict[str, Any],
        answers: Task | None,
        deadline: float | None,
    ) -> None:
        """Run the current node, follow its handoff, repeat; the cursor is saved after each."""
        while state.status == Status.EXECUTING:
            if state.execution_count >= self.max_iterations:
                self._stop(
                    state,
                    store,
                    f"swarm {self.id!r} reached max_iterations={self.max_iterations}",
                    resumable=False,
                )
                break
            if deadline is not None and time.perf_counter() >= deadline:
                self._stop(state, store, self.timeout_message())
                break
            result, handoff = await self._run_current(state, invocation_state, answers, deadline)
            answers = None
            self.record(state, result, handoff)
            if state.status == Status.EXECUTING and handoff is None:
                state.status = result.status
            store.save(state.to_cursor(self.id))

    async def _run_current(
        self,
        state: SwarmState,
        invocation_state: dict[str, Any],
        answers: Task | None,
        deadline: float | None,
    ) -> tuple[NodeResult, Handoff | None]:
        call, recorded = self.prepare_node(state, invocation_state, answers, deadline)
        if call is None:
            return restored_node_result(self.nodes[state.current_node]), recorded
        result = await run_node(call)
        return result, self.node_handoff(state, result)

    def as_steps(self) -> SwarmSteps:
        """This swarm's run as plan / node_call / fold steps (one node a batch)."""
        return SwarmSteps(self)

    def node_base_id(self, state: SwarmState) -> str:
        """The invocation id of the current node's execution ("<swarm>:<run>:<node>:<n>")."""
        return f"{self.id}:{state.run_id}:{state.current_node}:{state.completed_steps + 1}"

    def prepare_node(
        self,
        state: SwarmState,
        invocation_state: dict[str, Any],
        answers: Task | None,
        deadline: float | None,
    ) -> tuple[NodeCall | None, Handoff | None]:
        """How to invoke the current node; (None, handoff) if it already handed off (not re-run)."""
        name = state.current_node
        agent = self.nodes[name]
        base_id = self.node_base_id(state)
        if answers is None:
            recorded = Handoff.from_state(agent, base_id)
            if recorded is not None:
                return None, recorded
        node_input, invocation_id = self._node_input(state, answers, base_id)
        timeout, message = self._node_timeout(name, deadline)
        call = NodeCall(
            name=name,
            executor=agent,
            input=node_input,
            invocation_id=invocation_id,
            invocation_state={
                **invocation_state,
                "swarm": self,
                "swarm_invocation_id": base_id,
                "node_name": name,
            },
            timeout=timeout,
            timeout_message=message,
            should_stop=lambda: Handoff.from_state(agent, base_id) is not None,
        )
        return call, None

    def node_handoff(self, state: SwarmState, result: NodeResult) -> Handoff | None:
        """The handoff the current node made in this execution; its pause then counts as completion."""
        handoff = None
        if result.status in (Status.COMPLETED, Status.PAUSED):
            handoff = Handoff.from_state(self.nodes[state.current_node], self.node_base_id(state))
        if handoff is not None:
            result.status = Status.COMPLETED  # the pause that ended its turn was the handoff
        return handoff

    def _node_input(
        self, state: SwarmState, answers: Task | None, base_id: str
    ) -> tuple[Task, str]:
        """What the current node is invoked with, and the invocation id of that call."""
        name = state.current_node
        if answers is not None and name in state.results:
            asked = [interrupt_dict(i) for i in state.results[name].interrupts]
            return route_responses(answers, asked), f"{base_id}:answer{state.interrupt_rounds}"
        return self._input(state), base_id

    def _node_timeout(self, name: str, deadline: float | None) -> tuple[float | None, str]:
        """The node's time budget: node_timeout, or less when the swarm's deadline is nearer."""
        timeout = self.node_timeout
        message = f"node {name!r} timed out after {self.node_timeout}s (node_timeout)"
        if deadline is not None:
            remaining = max(deadline - time.perf_counter(), 0.001)
            if timeout is None or remaining < timeout:
                timeout = remaining
                message = f"{self.timeout_message()} while node {name!r} was running"
        return timeout, message

    def _input(self, state: SwarmState) -> Task:
        """The current node's input, built from completed steps only.

        A retry of a failed or interrupted attempt (the same invocation id) gets the same
        input: its session refuses another prompt under that id.
        """
        if not state.handoffs:
            return state.task
        last = state.handoffs[-1]
        parts = [
            f"Handoff from {last.from_node}: {last.message}",
            f"Original task:\n{task_text(state.task)}",
        ]
        if state.shared_context:
            parts.append(
                "Shared context:\n" + json.dumps(state.shared_context, indent=1, sort_keys=True)
            )
        parts.append("Agents so far: " + " -> ".join(h.from_node for h in state.handoffs))
        return compose_input("\n\n".join(parts), state.task)

    def record(self, state: SwarmState, result: NodeResult, handoff: Handoff | None) -> None:
        """Fold the current node's execution into `state`: failure, interrupt, or its handoff."""
        name = state.current_node
        state.results[name] = result
        state.execution_count += 1
        state.node_history.append(name)
        add_usage(state.accumulated_usage, result.usage)
        add_metrics(state.accumulated_metrics, result.metrics)
        if result.status == Status.FAILED:
            state.status, state.error = Status.FAILED, f"node {name!r} failed: {result.error}"
            logger.error("swarm %r failed: %s", self.id, state.error)
            return
        if result.status == Status.INTERRUPTED:
            state.interrupt_rounds += 1
        if result.status != Status.COMPLETED:
            return  # failed, interrupted or paused: a later call re-invokes it with the same id
        state.completed_steps += 1
        state.interrupt_rounds = 0
        if handoff is None:
            return
        if len(state.handoffs) >= self.max_handoffs:
            state.status, state.resumable = Status.FAILED, False
            state.error = f"swarm {self.id!r} reached max_handoffs={self.max_handoffs} ({name!r} -> {handoff.to_node!r})"
            logger.error("%s", state.error)
            return
        state.handoffs.append(handoff)
        if handoff.context:
            state.shared_context.setdefault(name, {}).update(handoff.context)
        state.current_node = handoff.to_node
        recent = (
            [*state.node_history, handoff.to_node][-self.detection_window :]
            if self.detection_window
            else []
        )
        if len(recent) >= self.detection_window > 0 and len(set(recent)) < self.min_unique_agents:
            state.status, state.resumable = Status.FAILED, False
            state.error = (
                f"swarm {self.id!r} stopped repetitive handoffs: the last {self.detection_window} executions "
                f"involved only {sorted(set(recent))} (fewer than repetitive_handoff_min_unique_agents="
                f"{self.min_unique_agents})"
            )
            logger.error("%s", state.error)

    def _stop(
        self, state: SwarmState, store: CursorStore, error: str, *, resumable: bool = True
    ) -> None:
        state.status, state.error, state.resumable = Status.FAILED, error, resumable
        logger.error("%s", error)
        store.save(state.to_cursor(self.id))

    def timeout_message(self) -> str:
        """The error of a run that ran out of its execution_timeout."""
        return f"swarm {self.id!r} execution timed out after {self.execution_timeout}s (execution_timeout)"

    def _result(self, state: SwarmState, seconds: float, resumed: bool) -> SwarmResult:
        current = state.results.get(state.current_node)
        interrupts = (
            current.interrupts if current is not None and state.status == Status.INTERRUPTED else []
        )
        return SwarmResult(
            status=state.status,
            results=dict(state.results),
            accumulated_usage=dict(state.accumulated_usage),  # type: ignore[arg-type]
            accumulated_metrics=dict(state.accumulated_metrics),
            execution_count=state.execution_count,
            execution_time=seconds,
            error=state.error,
            interrupts=interrupts,
            resumed=resumed,
            node_history=list(state.node_history),
            handoffs=list(state.handoffs),
            shared_context={k: dict(v) for k, v in state.shared_context.items()},
            current_node=state.current_node,
            state=state,
        )

    def __repr__(self) -> str:
        return f"Swarm(id={self.id!r}, nodes={list(self.nodes)}, entry_point={self.entry_point!r})"


def restored_node_result(agent: Agent) -> NodeResult:
    """The stored last answer of a node that handed off before a crash the cursor missed.

    The node is not re-run: its recorded handoff is taken as is.
    """
    last = next((m for m in reversed(agent.messages) if m["role"] == "assistant"), None)
    return NodeResult(
        restored_agent_result(text_of(last), "end_turn", {}), Status.COMPLETED, restored=True
    )
