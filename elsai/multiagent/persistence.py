"""multi_agent.json: the orchestrator cursor of a Graph or Swarm run.

It answers "which node runs next", never "where inside a node" (each node agent's own
checkpoint.json answers that). It is small: per node only the final text, stop reason and
usage are kept, never transcripts.

Writes go through `SessionManager.write_multi_agent`, a conditional replace on the version
this process last read or wrote: a second writer fails with `SessionConflictError` instead
of silently clobbering the cursor.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from elsai.checkpoint.model import utc_now
from elsai.interrupt.model import interrupt_dict
from elsai.multiagent.base import NodeResult, Status, Task, restored_agent_result, usage_dict
from elsai.schema import require_schema_version
from elsai.session.layout.records import SessionCorruptError, decode_value, encode_value

if TYPE_CHECKING:
    from elsai.session.manager import SessionManager

MULTI_AGENT_SCHEMA_VERSION = "1.0"
R = TypeVar("R", bound="CursorRecord")


class NodeRecord(BaseModel):
    """The small, durable summary of a node's latest execution."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="allow")
    status: Status
    text: str = ""
    stop_reason: str | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    execution_time: float = 0.0
    resumed_from_checkpoint: bool = False
    error: str | None = None
    interrupts: list[dict[str, Any]] = Field(default_factory=list)

    @classmethod
    def of(cls, result: NodeResult) -> NodeRecord:
        """The record of one node execution, as persisted in multi_agent.json."""
        return cls(
            status=result.status,
            text=result.text,
            stop_reason=result.stop_reason,
            usage=usage_dict(result.usage),
            execution_time=round(result.execution_time, 3),
            resumed_from_checkpoint=result.resumed_from_checkpoint,
            error=result.error,
            interrupts=[interrupt_dict(i) for i in result.interrupts],
        )

    def to_result(self) -> NodeResult:
        """The node result this record stands for when a run is continued in a new process."""
        result = restored_agent_result(self.text, self.stop_reason, self.usage)
        result.interrupts = [dict(i) for i in self.interrupts]
        return NodeResult(
            result=result,
            status=self.status,
            execution_time=self.execution_time,
            error=self.error,
            usage=dict(self.usage),  # type: ignore[arg-type]
            resumed_from_checkpoint=self.resumed_from_checkpoint,
            restored=True,
        )


class CursorRecord(BaseModel):
    """Fields every orchestrator cursor has."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="allow")
    schema_version: str = MULTI_AGENT_SCHEMA_VERSION
    type: str
    id: str
    #: Identifies one run; part of every node invocation id, so a new run never collides.
    run_id: str
    #: The caller's invocation id for this run, if given: a later call with the same id finds
    #: the completed run and returns its stored result instead of running again.
    invocation_id: str | None = None
    status: Status
    task: Any
    node_results: dict[str, NodeRecord] = Field(default_factory=dict)
    execution_count: int = 0
    accumulated_usage: dict[str, int] = Field(default_factory=dict)
    accumulated_metrics: dict[str, int | float] = Field(default_factory=dict)
    error: str | None = None
    #: False when the run stopped on a limit (max executions / handoffs, repetitive handoffs):
    #: the next call then starts a fresh run instead of continuing this one.
    resumable: bool = True
    created_at: str = Field(default_factory=utc_now)
    updated_at: str = Field(default_factory=utc_now)

    def completed_call(self, invocation_id: str | None) -> bool:
        """This run completed, and it was started by the call with this invocation id."""
        return (
            self.status == Status.COMPLETED
            and bool(invocation_id)
            and self.invocation_id == invocation_id
        )

    @property
    def continuable(self) -> bool:
        """The run stopped unfinished, and the next call continues it."""
        return self.status != Status.COMPLETED and self.resumable

    @field_validator("schema_version")
    @classmethod
    def _known_schema(cls, value: str) -> str:
        return require_schema_version(value, MULTI_AGENT_SCHEMA_VERSION)


class EdgeRecord(BaseModel):
    """One edge of the graph's topology, by node names (its condition is code, not stored)."""

    from_node: str
    to_node: str
    conditional: bool = False


class GraphCursor(CursorRecord):
    """A graph run in multi_agent.json: what completed, failed, and runs next."""

    type: Literal["graph"] = "graph"
    completed_nodes: list[str] = Field(default_factory=list)
    failed_nodes: list[str] = Field(default_factory=list)
    interrupted_nodes: list[str] = Field(default_factory=list)
    #: Nodes to run when the run continues (running, failed, interrupted or paused ones).
    next_nodes: list[str] = Field(default_factory=list)
    #: For each next node: the upstream nodes whose outputs form its input ([] = the task).
    next_inputs: dict[str, list[str]] = Field(default_factory=dict)
    #: Edges that fired into nodes that have not run since: target -> sources.
    triggers: dict[str, list[str]] = Field(default_factory=dict)
    execution_order: list[str] = Field(default_factory=list)
    #: Completed executions per node (numbers each node invocation id).
    node_executions: dict[str, int] = Field(default_factory=dict)
    #: Interrupts answered so far in a node's current execution (numbers resume invocations).
    interrupt_rounds: dict[str, int] = Field(default_factory=dict)
    #: The graph's edges, so a reader (the console) can draw the whole graph; not read back.
    edges: list[EdgeRecord] = Field(default_factory=list)


class HandoffRecord(BaseModel):
    """One handoff between swarm agents, as persisted."""

    from_node: str
    to_node: str
    message: str
    context: dict[str, Any] = Field(default_factory=dict)


class SwarmCursor(CursorRecord):
    """A swarm run in multi_agent.json: the current node, its history and the handoffs."""

    type: Literal["swarm"] = "swarm"
    current_node: str
    node_history: list[str] = Field(default_factory=list)
    handoffs: list[HandoffRecord] = Field(default_factory=list)
    #: Context handed over so far, by the agent that shared it.
    shared_context: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: Node executions that completed (numbers node invocation ids).
    completed_steps: int = 0
    interrupt_rounds: int = 0


def encode_task(task: Task) -> Any:
    """JSON-ready task: bytes (images, documents) stored as the session's records store them."""
    return encode_value(task)


def decode_task(value: Any) -> Task:
    """The task `encode_task` stored, with its bytes restored."""
    decoded = decode_value(value)
    if not isinstance(decoded, str | list):
        raise SessionCorruptError(
            f"multi_agent.json task must be text or content blocks, got {type(decoded).__name__}"
        )
    return decoded


class CursorStore:
    """Reads and conditionally writes one orchestrator's multi_agent.json (no-op without a manager)."""

    def __init__(
        self, manager: SessionManager | None, kind: Literal["graph", "swarm"], orchestrator_id: str
    ) -> None:
        self.manager = manager
        self.kind = kind
        self.orchestrator_id = orchestrator_id
        self.version: str | None = None
        self._created_at: dict[str, str] = {}

    @property
    def enabled(self) -> bool:
        """Whether there is a session to persist to (without one, saving is a no-op)."""
        return self.manager is not None

    def where(self) -> str:
        """Where the cursor is stored, for messages a person reads."""
        if self.manager is None:
            return "multi_agent.json"
        from elsai.session.layout import keys

        return self.manager.storage.describe(keys.multi_agent_key(self.manager.session_id))

    def load(self, cls: type[R]) -> R | None:
        """The stored cursor (remembering its version), or None if there is none yet."""
        self.version = None
        if self.manager is None:
            return None
        found = self.manager.read_multi_agent()
        if found is None:
            return None
        data, self.version = found
        stored_type = data.get("type") if isinstance(data, dict) else None
        if stored_type != self.kind:
            raise ValueError(
                f"{self.where()} holds the cursor of a {stored_type!r} orchestrator, not a {self.kind!r}: "
                "use a separate session id for each Graph or Swarm"
            )
        try:
            record = cls.model_validate(data)
        except ValidationError as exc:
            raise SessionCorruptError(f"corrupt multi-agent state {self.where()}: {exc}") from exc
        self._created_at[record.run_id] = record.created_at
        if record.id != self.orchestrator_id:
            raise ValueError(
                f"{self.where()} belongs to {self.kind} {record.id!r}, not {self.orchestrator_id!r}: "
                "use a separate session id for each Graph or Swarm, or the same id to continue its run"
            )
        return record

    def created_at(self, run_id: str) -> str:
        """When run `run_id` started (as loaded from its cursor), or "" if unknown."""
        return self._created_at.get(run_id, "")

    def save(self, record: CursorRecord) -> None:
        """Write the cursor, conditionally on the version last read (a second writer fails loudly)."""
        if self.manager is None:
            return
        record.updated_at = utc_now()
        record.created_at = self._created_at.setdefault(record.run_id, record.created_at)
        data = json.loads(record.model_dump_json())
        self.version = self.manager.write_multi_agent(data, self.version)
