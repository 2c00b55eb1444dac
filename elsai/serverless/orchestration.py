"""Multi-agent jobs: the factory built a Graph or a Swarm, and Step Functions schedules its nodes.

The first RunSlice of a job finds an orchestrator instead of an Agent and reports status
"orchestrate"; the state machine then loops Plan → Map(node slices) → Fold:

- `plan`: starts (or continues) the run in multi_agent.json and names the ready nodes;
- `run_node_slice`: one Lambda slice of one node: the node's agent is rebuilt from S3, acts
  on its own bookmark and stops at a boundary before the deadline ("continue"), on an
  interrupt ("interrupted"), or when its execution ends ("completed");
- `fold`: records the batch's reports in multi_agent.json (conditional write), evaluates
  the edges and names the next batch, or the end.

The Graph/Swarm semantics stay in `elsai.multiagent`: this module reaches them only through
the orchestrator's `as_steps()` (`elsai.multiagent.step_types`). Payloads carry names,
statuses and counters; answers are read from the session.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from elsai.agent.config import AgentConfig
from elsai.checkpoint.config import CheckpointConfig
from elsai.errors import AgentFactoryError
from elsai.multiagent.invoke import NodeCall
from elsai.multiagent.step_types import OrchestratorSteps, StepOutcome
from elsai.serverless.budgets import branch_model_calls, branch_slices, budget_breach
from elsai.serverless.contract import (
    COMPLETED,
    CONTINUE,
    FAILED,
    INTERRUPTED,
    RUN,
    JobStepRequest,
    RunStatus,
)
from elsai.serverless.contract.node_steps import (
    FoldRequest,
    NodeSliceRequest,
    NodeSliceResult,
    PlanResult,
)
from elsai.serverless.deadline import DeadlinePolicy
from elsai.serverless.errors import checked_interrupts
from elsai.serverless.factory import AgentFactory
from elsai.serverless.fingerprint import check_build, removed_nodes, steps_fingerprint
from elsai.serverless.limits import MAX_SLICE_TEXT_CHARS
from elsai.serverless.node_scope import ScopedSessionManager, loaded_nodes
from elsai.serverless.node_waits import read_waits, record_waits
from elsai.serverless.slice_core import (
    SliceInput,
    StopStatus,
    answer_blocks,
    is_orchestrator,
    margin_ms,
    run_agent,
    slice_fields,
    step_config,
)
from elsai.session.manager import SessionManager
from elsai.session.storage.base import StorageBackend
from elsai.telemetry.job_spans import record_job_run
from elsai.telemetry.otel import OtelTracing
from elsai.types import AgentResult

_RUN_STATUS: dict[str, RunStatus] = {
    "executing": "run",
    "completed": "completed",
    "failed": "failed",
    "interrupted": "interrupted",
    "paused": "run",
}


def node_config(config: AgentConfig, node: str) -> AgentConfig:
    """The AgentConfig for one node of a multi-agent job: the job's session, `node` as agent_id.

    Factories that build a Graph or Swarm give each node agent one of these (and the
    orchestrator `config.session_manager`), so every node has its own messages and
    checkpoint under the job's session.
    """
    return AgentConfig(
        agent_id=node,
        session_manager=config.session_manager,
        checkpoint=config.checkpoint or CheckpointConfig(position="both"),
        hooks=list(config.hooks),
    )


def build_steps(
    request: JobStepRequest,
    *,
    session_manager: SessionManager,
    factory: AgentFactory,
    deadline: DeadlinePolicy | None = None,
    hooks: list[Any] | None = None,
) -> OrchestratorSteps:
    """Rebuild the job's orchestrator from the factory and check it uses the job's session.

    Only the node agents the step uses are loaded from the session (`loaded_nodes`), so a
    step's reads do not grow with the number of nodes.
    """
    scoped = ScopedSessionManager(session_manager, loaded_nodes(request))
    config = step_config(request, scoped, deadline or DeadlinePolicy(), hooks or [])
    built: Any = factory(config)
    if not is_orchestrator(built):
        raise AgentFactoryError(
            f"the agent factory built a {type(built).__name__} for a multi-agent job step; "
            "it must build the same Graph or Swarm on every call"
        )
    manager = getattr(built, "session_manager", None)
    if manager is None or manager.session_id != request.session_id:
        raise AgentFactoryError(
            "a Graph or Swarm job needs the orchestrator's session manager to be the job's "
            "(config.session_manager); see elsai.serverless.node_config"
        )
    steps: OrchestratorSteps = built.as_steps()
    for name in built.nodes:
        agent = steps.node_agent(name)
        own = agent.config.session_manager
        if own is None or own.session_id != request.session_id or agent.config.checkpoint is None:
            raise AgentFactoryError(
                f"node {name!r} must use the job's session and a checkpoint: build it with "
                "elsai.serverless.node_config(config, name)"
            )
    return steps


def plan_result(
    kind: str,
    outcome: StepOutcome,
    slices: int = 0,
    answers: dict[str, list[dict[str, Any]]] | None = None,
) -> PlanResult:
    """The state machine's view of a step outcome (names and small status only).

    Each planned node's item carries its own `answers` (None: it was not waiting).
    """
    now = time.time()
    return PlanResult(
        status=_RUN_STATUS.get(str(outcome.status), FAILED),
        kind=kind,
        nodes=[
            {"node": name, "started_at": now, "interrupt_responses": (answers or {}).get(name)}
            for name in outcome.nodes
        ],
        batch=outcome.batch,
        error=outcome.error or "",
        text=outcome.text[:MAX_SLICE_TEXT_CHARS],
        interrupts=checked_interrupts(list(outcome.interrupts)),
        node_status=dict(outcome.node_status),
        slices=slices,
    )


def checked_build(
    request: JobStepRequest, steps: OrchestratorSteps, storage: StorageBackend | None
) -> PlanResult | None:
    """Record or compare the job's fingerprint (a deployed job only); a failed run, or None.

    While pinned a difference raises ``BuildMismatchError`` (not retried). After an upgrade
    the changes are recorded; a node the new code removed fails the run, naming it, and an
    added node is planned like any other.
    """
    if storage is None or request.agent_function is None:
        return None
    built = steps_fingerprint(steps, request.agent_function)
    gone = removed_nodes(check_build(storage, request.job_id, built))
    if not gone:
        return None
    names = ", ".join(f"{n!r}" for n in gone)
    error = (
        f"the upgrade to version {built.code_version} removed node(s) {names} from the "
        f"{steps.kind} this job runs; the run cannot continue (its nodes now: {built.nodes})"
    )
    return PlanResult(status=FAILED, kind=steps.kind, error=error)


def plan(
    request: JobStepRequest,
    steps: OrchestratorSteps,
    storage: StorageBackend | None = None,
    tracing: OtelTracing | None = None,
) -> PlanResult:
    """Start or continue the job's run; the nodes to run now (the job id keys the run).

    With ``storage`` the build is fingerprint-checked first (``checked_build``), and nodes
    whose waits were answered (``elsai.serverless.node_waits``) run with their answers.
    With ``tracing``, a plan that ends the run records its run span (``_ended``).
    """
    failed = checked_build(request, steps, storage)
    if failed is not None:
        return failed
    waits = read_waits(storage, request.job_id) if storage is not None else None
    answers = waits.answered() if waits is not None else {}
    outcome = steps.plan(request.prompt or "", request.job_id, answered=set(answers))
    if outcome.status == INTERRUPTED and request.interrupt_responses:
        # answers carried in the state (a job parked by code from before per-node waits,
        # upgraded on resume): the nodes they answer run with them
        answers = _carried(outcome.interrupts, request.interrupt_responses)
        outcome = steps.plan(request.prompt or "", request.job_id, answered=set(answers))
    return _ended(
        request, steps.kind, outcome, plan_result(steps.kind, outcome, answers=answers), tracing
    )


def _ended(
    request: JobStepRequest,
    kind: str,
    outcome: StepOutcome,
    result: PlanResult,
    tracing: OtelTracing | None,
) -> PlanResult:
    """`result`, after recording the job's run span if this step ended the run."""
    if tracing is not None and result.status in (COMPLETED, FAILED):
        record_job_run(tracing, request.job_id, kind, outcome, result.status, result.error or None)
    return result


def _carried(
    interrupts: list[dict[str, Any]], responses: list[dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """The state's answers by the node whose interrupt each one answers."""
    owner = {str(i.get("id")): str(i.get("node")) for i in interrupts}
    answers: dict[str, list[dict[str, Any]]] = {}
    for response in responses:
        node = owner.get(str(response.get("interruptId")))
        if node is not None:
            answers.setdefault(node, []).append(response)
    return answers


def fold(
    request: FoldRequest,
    steps: OrchestratorSteps,
    storage: StorageBackend | None = None,
    tracing: OtelTracing | None = None,
) -> PlanResult:
    """Record the batch's node reports; the next batch, or how the run ended (build checked).

    Every node's slices and model calls count toward the job's budgets (`budget_breach`).
    """
    failed = checked_build(request, steps, storage)
    if failed is not None:
        return failed
    # in the order the nodes finished (as graph(task) records them); errored branches last
    finished = sorted(request.results, key=lambda item: float(item.get("ended_at") or "inf"))
    reports = {str(item["node"]): _report(item) for item in finished}
    outcome = steps.fold(request.batch, reports)
    if storage is not None:  # each interrupted node's wait is its own, answered apart
        record_waits(storage, request.job_id, outcome.interrupts, reports, request.batch)
    result = plan_result(steps.kind, outcome, sum(branch_slices(i) for i in finished))
    result.model_calls = sum(branch_model_calls(i) for i in finished)
    breach = budget_breach(
        finished,
        slices_before=request.slice,
        model_calls_before=request.model_calls,
        max_slices=request.max_slices,
        max_model_calls=request.max_model_calls,
        more_to_run=result.status in (RUN, INTERRUPTED),
    )
    if breach is not None and result.status != FAILED:
        result.status, result.nodes, result.interrupts = FAILED, [], []
        result.error, result.error_type = breach.message, breach.error_type
    return _ended(request, steps.kind, outcome, result, tracing)


def _report(item: dict[str, Any]) -> dict[str, Any]:
    """A branch's output as a node report; a caught Lambda error becomes the node's cause."""
    if item.get("status") != FAILED or not isinstance(item.get("error"), dict):
        return item
    error = item["error"]
    cause: Any = error.get("Cause")
    try:
        parsed = json.loads(cause) if isinstance(cause, str) else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and parsed.get("errorMessage") is not None:
        message = f"{parsed.get('errorType', error.get('Error'))}: {parsed['errorMessage']}"
    else:
        message = f"{error.get('Error')}: {cause}"
    return {**item, "error": message}


def run_node_slice(
    request: NodeSliceRequest,
    steps: OrchestratorSteps,
    *,
    remaining_ms: Callable[[], int],
    stop_margin_ms: int | None = None,
    deadline: DeadlinePolicy | None = None,
) -> NodeSliceResult:
    """One slice of node `request.node`: act on its bookmark, stop before the deadline."""
    started = time.time()
    agent = steps.node_agent(request.node)
    answers = answer_blocks(agent, request.interrupt_responses)
    call = steps.node_call(request.node, answers, request.started_at)
    if call is None:  # a Swarm node that handed off before a crash: not run again
        return NodeSliceResult(
            node=request.node, status=COMPLETED, stop_reason="end_turn", slice=request.slice,
            started_at=started, ended_at=time.time(), node_model_calls=request.model_calls,
        )  # fmt: skip
    if call.timeout is not None and call.timeout <= 0:
        return _failed(request, call.timeout_message, started)
    if answers is not None or request.slice == 0:
        given = SliceInput(call.input, call.invocation_id)
    else:  # a continuation: the bookmark resumes
        given = SliceInput.continuation(call.invocation_id, request.slice)
    margin = margin_ms(deadline or DeadlinePolicy(), agent.model, stop_margin_ms)
    node_deadline = time.time() + call.timeout if call.timeout is not None else None
    handoff = call.should_stop

    def should_stop() -> bool:
        return (
            remaining_ms() < margin
            or (node_deadline is not None and time.time() >= node_deadline)
            or (handoff is not None and handoff())
        )

    # invocation_state: e.g. the Swarm its handoff tool reports to
    status, result = run_agent(agent, given, should_stop, call.invocation_state)
    return _node_result(request, steps, status, result, call, node_deadline, started)


def _node_result(
    request: NodeSliceRequest,
    steps: OrchestratorSteps,
    status: StopStatus,
    result: AgentResult,
    call: NodeCall,
    node_deadline: float | None,
    started: float,
) -> NodeSliceResult:
    if status == CONTINUE and steps.handed_off(request.node):
        status = COMPLETED  # a Swarm node pauses once it handed off: its execution is done
    elif status == CONTINUE and node_deadline is not None and time.time() >= node_deadline:
        return _failed(request, call.timeout_message, started)
    metrics = result.metrics
    return NodeSliceResult(
        node=request.node,
        status=status,
        usage={k: v for k, v in dict(metrics.usage).items() if isinstance(v, int)},
        metrics={
            "latency_ms": round(metrics.latency_ms, 3),
            "cycles": metrics.cycles,
            "model_calls": metrics.model_calls,
            "tool_calls": metrics.tool_calls,
        },
        slice=request.slice,
        started_at=started,
        ended_at=time.time(),
        node_model_calls=request.model_calls + metrics.model_calls,
        **slice_fields(result),
    )


def _failed(request: NodeSliceRequest, message: str, started: float) -> NodeSliceResult:
    return NodeSliceResult(
        node=request.node, status=FAILED, stop_reason="timeout", error=message,
        slice=request.slice, started_at=started, ended_at=time.time(),
        node_model_calls=request.model_calls,
    )  # fmt: skip


__all__ = [
    "build_steps",
    "checked_build",
    "fold",
    "node_config",
    "plan",
    "run_node_slice",
]
