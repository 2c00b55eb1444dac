"""A Swarm run's state and result, and their multi_agent.json form."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from elsai.multiagent.base import (
    MultiAgentResult,
    NodeResult,
    Status,
    Task,
    empty_metrics,
    usage_dict,
)
from elsai.multiagent.persistence import (
    HandoffRecord,
    NodeRecord,
    SwarmCursor,
    decode_task,
    encode_task,
)
from elsai.multiagent.swarm.handoff import Handoff
from elsai.types import Usage, empty_usage


@dataclass
class SwarmState:
    """One swarm run's state: the current node, what ran, the handoffs so far."""

    task: Task
    run_id: str
    current_node: str
    invocation_id: str | None = None
    status: Status = Status.PENDING
    #: Node executions that finished, in order.
    node_history: list[str] = field(default_factory=list)
    handoffs: list[Handoff] = field(default_factory=list)
    #: Context shared through handoffs, by the agent that shared it.
    shared_context: dict[str, dict[str, Any]] = field(default_factory=dict)
    results: dict[str, NodeResult] = field(default_factory=dict)
    execution_count: int = 0
    #: Node executions that completed (numbers node invocation ids; retries reuse theirs).
    completed_steps: int = 0
    #: Interrupts answered so far in the current node's execution.
    interrupt_rounds: int = 0
    accumulated_usage: Usage = field(default_factory=empty_usage)
    accumulated_metrics: dict[str, float] = field(default_factory=empty_metrics)
    error: str | None = None
    resumable: bool = True

    def to_cursor(self, swarm_id: str) -> SwarmCursor:
        """The multi_agent.json record of this state, written after every node execution."""
        return SwarmCursor(
            id=swarm_id,
            run_id=self.run_id,
            invocation_id=self.invocation_id,
            status=self.status,
            task=encode_task(self.task),
            current_node=self.current_node,
            node_history=list(self.node_history),
            handoffs=[
                HandoffRecord(
                    from_node=h.from_node, to_node=h.to_node, message=h.message, context=h.context
                )
                for h in self.handoffs
            ],
            shared_context={k: dict(v) for k, v in self.shared_context.items()},
            node_results={name: NodeRecord.of(r) for name, r in self.results.items()},
            execution_count=self.execution_count,
            completed_steps=self.completed_steps,
            interrupt_rounds=self.interrupt_rounds,
            accumulated_usage=usage_dict(self.accumulated_usage),
            accumulated_metrics=dict(self.accumulated_metrics),
            error=self.error,
            resumable=self.resumable,
        )

    @classmethod
    def from_cursor(cls, cursor: SwarmCursor) -> SwarmState:
        """The state a stored cursor describes, to continue its run."""
        return cls(
            task=decode_task(cursor.task),
            run_id=cursor.run_id,
            invocation_id=cursor.invocation_id,
            current_node=cursor.current_node,
            status=cursor.status,
            node_history=list(cursor.node_history),
            handoffs=[
                Handoff(h.from_node, h.to_node, h.message, dict(h.context)) for h in cursor.handoffs
            ],
            shared_context={k: dict(v) for k, v in cursor.shared_context.items()},
            results={name: record.to_result() for name, record in cursor.node_results.items()},
            execution_count=cursor.execution_count,
            completed_steps=cursor.completed_steps,
            interrupt_rounds=cursor.interrupt_rounds,
            accumulated_usage=dict(cursor.accumulated_usage),  # type: ignore[arg-type]
            accumulated_metrics={**empty_metrics(), **cursor.accumulated_metrics},
            error=cursor.error,
            resumable=cursor.resumable,
        )


@dataclass
class SwarmResult(MultiAgentResult):
    """What `swarm(task)` returns. `text` is the answer of the node that finished the run."""

    node_history: list[str] = field(default_factory=list)
    handoffs: list[Handoff] = field(default_factory=list)
    shared_context: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The node that ran last (the one that answered, failed or was interrupted).
    current_node: str = ""
    state: SwarmState | None = None

    @property
    def text(self) -> str:
        """The answer of the node that ran last."""
        result = self.results.get(self.current_node)
        return result.text if result is not None else ""
