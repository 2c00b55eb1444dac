"""What every orchestrator shares: statuses, per-node results, and the invoke interface.

A Graph or a Swarm is a `MultiAgentBase`: `orchestrator(task)` runs it synchronously,
`await orchestrator.invoke_async(task)` inside an event loop. A Graph may be a node of
another Graph, because both kinds of node are invoked the same way.
"""

from __future__ import annotations

import abc
import asyncio
import concurrent.futures
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, cast

from elsai.errors import ConcurrentInvocationError
from elsai.types import AgentResult, ContentBlock, InvocationMetrics, StopReason, Usage, empty_usage

#: What an orchestrator is asked to do: text, or content blocks (Converse blocks, or
#: `{"interruptResponse": ...}` blocks answering an interrupted run).
Task = str | list[ContentBlock] | list[dict[str, Any]]

_USAGE_KEYS = (
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "cacheReadInputTokens",
    "cacheWriteInputTokens",
)


class Status(StrEnum):
    """Status of a node or of a whole run. Compares equal to its string value."""

    PENDING = "pending"
    EXECUTING = "executing"
    COMPLETED = "completed"
    FAILED = "failed"
    INTERRUPTED = "interrupted"
    PAUSED = "paused"


def add_usage(total: Usage, usage: dict[str, Any] | Usage) -> None:
    """Add token counts of `usage` into `total`, in place."""
    counts = cast(dict[str, int], total)
    for key in _USAGE_KEYS:
        value = usage.get(key)
        if isinstance(value, int):
            counts[key] = counts.get(key, 0) + value


def usage_dict(usage: Usage | dict[str, Any]) -> dict[str, int]:
    """Plain {name: count} copy of a usage record."""
    return {k: v for k, v in usage.items() if isinstance(v, int)}


def empty_metrics() -> dict[str, float]:
    """Counters summed over node executions (latency in milliseconds)."""
    return {"latency_ms": 0.0, "cycles": 0, "model_calls": 0, "tool_calls": 0}


def add_metrics(total: dict[str, float], metrics: dict[str, float]) -> None:
    """Add one node's metrics to a run's totals (metrics are summed, never overwritten)."""
    for key in ("latency_ms", "cycles", "model_calls", "tool_calls"):
        total[key] = total.get(key, 0) + metrics.get(key, 0)
    total["latency_ms"] = round(total["latency_ms"], 3)


@dataclass
class NodeResult:
    """One execution of one node.

    `result` is the node's own result: an `AgentResult` for an Agent node, a nested
    `GraphResult` for a Graph node. A node that finished in an earlier process (read back
    from multi_agent.json) has `restored=True` and an `AgentResult` rebuilt from the stored
    text, stop reason and usage.
    """

    result: AgentResult | MultiAgentResult | None
    status: Status
    #: Wall-clock seconds this execution took (in the process that ran it).
    execution_time: float = 0.0
    #: Why the node failed ("RuntimeError: ..." or a timeout message); None otherwise.
    error: str | None = None
    usage: Usage = field(default_factory=empty_usage)
    metrics: dict[str, float] = field(default_factory=empty_metrics)
    #: True if the node's agent acted on its own checkpoint bookmark during this execution.
    resumed_from_checkpoint: bool = False
    #: True if this result was read back from multi_agent.json instead of being produced now.
    restored: bool = False
    #: The exception a failed node raised (not persisted).
    exception: BaseException | None = None

    @property
    def text(self) -> str:
        """The node's answer text (empty if it produced no result)."""
        return self.result.text if self.result is not None else ""

    @property
    def stop_reason(self) -> StopReason | None:
        """Why the node's agent stopped, or None when the node was not a single agent."""
        if isinstance(self.result, AgentResult):
            return self.result.stop_reason
        return None

    @property
    def interrupts(self) -> list[Any]:
        """The node's pending interrupts, to answer by invoking the orchestrator again."""
        if self.result is None:
            return []
        return list(self.result.interrupts)


@dataclass
class MultiAgentResult:
    """Common shape of GraphResult and SwarmResult."""

    status: Status
    #: Latest execution of each node that ran in this run, by node name.
    results: dict[str, NodeResult] = field(default_factory=dict)
    accumulated_usage: Usage = field(default_factory=empty_usage)
    accumulated_metrics: dict[str, float] = field(default_factory=empty_metrics)
    #: Node executions in this run (across processes when the run was resumed).
    execution_count: int = 0
    #: Wall-clock seconds of this call.
    execution_time: float = 0.0
    #: Why the run failed, or None.
    error: str | None = None
    #: Pending interrupts of interrupted nodes (answer them by invoking again).
    interrupts: list[Any] = field(default_factory=list)
    #: True if this call continued a run stored in multi_agent.json.
    resumed: bool = False

    @property
    def text(self) -> str:
        """The run's answer text; each orchestrator's result says which nodes it comes from."""
        return ""

    @property
    def resumed_from_checkpoint(self) -> bool:
        """Whether any node acted on its own checkpoint bookmark during this call."""
        return any(r.resumed_from_checkpoint for r in self.results.values())

    def __str__(self) -> str:
        return self.text


def restored_agent_result(text: str, stop_reason: str | None, usage: dict[str, Any]) -> AgentResult:
    """An AgentResult standing in for a node result read back from multi_agent.json."""
    metrics = InvocationMetrics()
    metrics.add_usage(usage)  # type: ignore[arg-type]
    message = {"role": "assistant", "content": [{"text": text}]} if text else None
    return AgentResult(message=message, stop_reason=stop_reason or "end_turn", metrics=metrics)  # type: ignore[arg-type]


def keep_live_results(restored: dict[str, NodeResult], live: dict[str, NodeResult]) -> None:
    """Where this process itself produced a restored result, keep its full live result."""
    for name, result in live.items():
        stored = restored.get(name)
        if stored is not None and (stored.status, stored.text) == (result.status, result.text):
            restored[name] = result


def task_text(task: Task) -> str:
    """The text of a task (content blocks: their text blocks joined)."""
    if isinstance(task, str):
        return task
    return "\n".join(str(b["text"]) for b in blocks_of(task) if "text" in b)


def blocks_of(task: Task) -> list[dict[str, Any]]:
    """A block task as plain dicts."""
    return (
        [cast(dict[str, Any], b) for b in task] if not isinstance(task, str) else [{"text": task}]
    )


def compose_input(preamble: str, task: Task) -> Task:
    """A node input: `preamble` text, keeping non-text blocks of a block task."""
    if isinstance(task, str):
        return preamble
    return [{"text": preamble}, *[b for b in blocks_of(task) if "text" not in b]]


class MultiAgentBase(abc.ABC):
    """An orchestrator of agents. Runs are not re-entrant: one invocation at a time."""

    id: str

    def __call__(self, task: Task, **kwargs: Any) -> MultiAgentResult:
        """Run synchronously (works inside a running event loop too, on a worker thread)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            in_loop = False  # (run outside the handler: failures must not chain to this error)
        else:
            in_loop = True
        if not in_loop:
            return asyncio.run(self.invoke_async(task, **kwargs))
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, self.invoke_async(task, **kwargs)).result()

    @abc.abstractmethod
    async def invoke_async(
        self,
        task: Task,
        *,
        invocation_state: dict[str, Any] | None = None,
        invocation_id: str | None = None,
        **kwargs: Any,
    ) -> MultiAgentResult:
        """Run (or continue) the orchestration for `task`.

        `invocation_id` makes the call exactly-once: if the stored run with that id already
        completed, its stored result is returned without running anything. A parent Graph
        passes one to a nested orchestrator for the same reason it passes one to agents.
        """

    def as_steps(self) -> Any:
        """This orchestrator's run as plan / node_call / fold steps (`elsai.multiagent.steps`).

        How an engine that runs each node elsewhere (the serverless runtime) drives it.
        """
        from elsai.multiagent.steps import steps_for

        return steps_for(self)

    @contextmanager
    def _exclusive(self, kind: str, lock: threading.Lock, kwargs: dict[str, Any]) -> Iterator[None]:
        """Guard one `invoke_async` of a `kind` orchestrator: known arguments, one run at a time."""
        if kwargs:
            raise TypeError(f"unexpected keyword argument(s): {', '.join(sorted(kwargs))}")
        if not lock.acquire(blocking=False):
            raise ConcurrentInvocationError(
                f"{kind} {self.id!r} is already running; {kind}s are not re-entrant"
            )
        try:
            yield
        finally:
            lock.release()
