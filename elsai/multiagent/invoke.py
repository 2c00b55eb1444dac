"""Running one node: an Agent or a nested orchestrator, with a timeout, as a NodeResult.

Ordinary exceptions become a failed NodeResult (logged, and carried to the run's result).
BaseExceptions that are not Exceptions (process exit, cancellation, interrupt signals that
escaped an agent) propagate: they mean the process is going away, and the cursor in
multi_agent.json still names the node as pending, so a rebuilt orchestrator re-runs it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from elsai.agent.agent import Agent
from elsai.multiagent.base import (
    MultiAgentBase,
    MultiAgentResult,
    NodeResult,
    Status,
    Task,
    blocks_of,
)
from elsai.telemetry.spans import node_span, record_node
from elsai.types import AgentResult, Usage, empty_usage

logger: logging.Logger = logging.getLogger("elsai.multiagent")

Executor = Agent | MultiAgentBase


@dataclass(frozen=True)
class NodeCall:
    """How to invoke one node once."""

    name: str
    executor: Executor
    input: Task
    invocation_id: str
    invocation_state: dict[str, Any]
    #: Seconds before the node is abandoned as failed; None = no limit.
    timeout: float | None = None
    #: Shown when `timeout` fires, e.g. "node 'x' timed out after 5s (node_timeout)".
    timeout_message: str = ""
    should_stop: Callable[[], bool] | None = None


def status_of(result: AgentResult | MultiAgentResult) -> Status:
    """The orchestrator status one node's result stands for."""
    if isinstance(result, MultiAgentResult):
        return result.status
    if result.stop_reason == "interrupt":
        return Status.INTERRUPTED
    if result.stop_reason == "paused":
        return Status.PAUSED
    return Status.COMPLETED


def node_result(result: AgentResult | MultiAgentResult, seconds: float) -> NodeResult:
    """One execution's result with its usage, metrics and duration, as the cursor records it."""
    if isinstance(result, MultiAgentResult):
        usage: Usage = dict(result.accumulated_usage)  # type: ignore[assignment]
        metrics = dict(result.accumulated_metrics)
        resumed = result.resumed_from_checkpoint
    else:
        usage = dict(result.metrics.usage)  # type: ignore[assignment]
        metrics = {
            "latency_ms": round(result.metrics.latency_ms, 3),
            "cycles": result.metrics.cycles,
            "model_calls": result.metrics.model_calls,
            "tool_calls": result.metrics.tool_calls,
        }
        resumed = result.resumed_from_checkpoint
    status = status_of(result)
    error = (
        result.error if isinstance(result, MultiAgentResult) and status == Status.FAILED else None
    )
    return NodeResult(
        result=result,
        status=status,
        execution_time=seconds,
        error=error,
        usage=usage,
        metrics=metrics,
        resumed_from_checkpoint=resumed,
    )


async def run_node(call: NodeCall) -> NodeResult:
    """Invoke `call.executor` once; failures and timeouts come back as a failed NodeResult."""
    started = time.perf_counter()
    deadline = asyncio.timeout(call.timeout)
    try:
        coro: Any
        if isinstance(call.executor, Agent):
            coro = call.executor.invoke_async(
                call.input,
                invocation_id=call.invocation_id,
                invocation_state=call.invocation_state,
                should_stop=call.should_stop,
            )
        else:
            coro = call.executor.invoke_async(
                call.input, invocation_state=call.invocation_state, invocation_id=call.invocation_id
            )
        with node_span(call.name, call.invocation_id, call.executor) as span:
            async with deadline:
                result = await coro
            outcome = node_result(result, time.perf_counter() - started)
            record_node(span, outcome.status.value, outcome.resumed_from_checkpoint, outcome.error)
    except TimeoutError as exc:
        if not deadline.expired():
            return _exception_result(call, exc, started)
        message = call.timeout_message or f"node {call.name!r} timed out after {call.timeout}s"
        logger.error("%s", message)
        return failed(message, time.perf_counter() - started, exc)
    except Exception as exc:
        return _exception_result(call, exc, started)
    return outcome


def _exception_result(call: NodeCall, exc: Exception, started: float) -> NodeResult:
    logger.error("node %r failed: %s: %s", call.name, type(exc).__name__, exc, exc_info=exc)
    return failed(f"{type(exc).__name__}: {exc}", time.perf_counter() - started, exc)


def failed(message: str, seconds: float, exc: BaseException | None = None) -> NodeResult:
    """The result of a node that failed, with a message saying why."""
    return NodeResult(
        result=None,
        status=Status.FAILED,
        execution_time=seconds,
        error=message,
        usage=empty_usage(),
        exception=exc,
    )


def has_interrupt_responses(task: Task) -> bool:
    """Whether `task` carries interruptResponse blocks (answers for an interrupted node)."""
    return (
        any(isinstance(b.get("interruptResponse"), dict) for b in blocks_of(task))
        if not isinstance(task, str)
        else False
    )


def route_responses(task: Task, interrupts: list[dict[str, Any]]) -> Task:
    """The part of `task` meant for a node with these pending interrupts.

    Interrupt responses (`{"interruptResponse": {"interruptId": ...}}` blocks) go to the node
    that raised the interrupt; if none of the blocks names one of its interrupts, the node
    gets the whole task (its agent then reports what it is waiting for).
    """
    ids = {i.get("id") for i in interrupts if i.get("id")}
    if isinstance(task, str) or not ids:
        return task
    mine = [
        block
        for block in blocks_of(task)
        if isinstance(response := block.get("interruptResponse"), dict)
        and response.get("interruptId") in ids
    ]
    return mine or task
