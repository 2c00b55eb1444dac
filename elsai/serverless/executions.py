"""A job as the jobs API reports it: one or more chained Step Functions executions.

A Standard execution holds at most 25,000 history events, so a long job continues in a new
execution of the same machine (named ``<job_id>-c<N>``) and the old one succeeds with
``{"status": "continued", "continued_in": <name>}``. These functions follow that chain and
report one job; they are pure functions over a boto3 Step Functions client.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

CONTINUED = "continued"
MAX_HOPS = 100  # elsai.cdk.config.MAX_EXECUTIONS_PER_JOB: the chain is never longer


class JobNotFoundError(LookupError):
    """No execution is named after this job id."""


def execution_arn(machine_arn: str, name: str) -> str:
    """The ARN of execution ``name`` of the state machine ``machine_arn``."""
    prefix, sep, machine = machine_arn.rpartition(":stateMachine:")
    if not sep:
        raise ValueError(f"not a state machine ARN: {machine_arn!r}")
    return f"{prefix}:execution:{machine}:{name}"


def loads(text: str | None) -> Any:
    """JSON from Step Functions' text fields; a non-JSON value comes back as it is."""
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def continued_in(execution: dict[str, Any]) -> str | None:
    """The next execution's name when ``execution`` continued the job in another, else None."""
    if execution.get("status") != "SUCCEEDED":
        return None
    output = loads(execution.get("output"))
    if isinstance(output, dict) and output.get("status") == CONTINUED:
        name = output.get("continued_in")
        return str(name) if name else None
    return None


@dataclass(frozen=True)
class JobChain:
    """The first execution (the job's input and start) and the current one (its state)."""

    first: dict[str, Any]
    current: dict[str, Any]
    executions: int
    #: Every visible execution's ARN, first to current (what a job's events are read from).
    arns: tuple[str, ...] = ()


def _describe(sfn: Any, arn: str) -> dict[str, Any] | None:
    from botocore.exceptions import ClientError

    try:
        return dict(sfn.describe_execution(executionArn=arn))
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("ExecutionDoesNotExist", "InvalidArn"):
            return None
        raise


def follow_job(sfn: Any, machine_arn: str, job_id: str) -> JobChain:
    """Describe job ``job_id`` through its continuations; JobNotFoundError if it never started."""
    first = _describe(sfn, execution_arn(machine_arn, job_id))
    if first is None:
        raise JobNotFoundError(job_id)
    current, count, arns = first, 1, [str(first["executionArn"])]
    while count <= MAX_HOPS and (name := continued_in(current)) is not None:
        following = _describe(sfn, execution_arn(machine_arn, name))
        if following is None:  # not visible yet (eventual consistency): still running
            current = {**current, "status": "RUNNING", "output": None, "stopDate": None}
            break
        current, count = following, count + 1
        arns.append(str(following["executionArn"]))
    return JobChain(first=first, current=current, executions=count, arns=tuple(arns))


def job_view(job_id: str, chain: JobChain) -> dict[str, Any]:
    """The JSON ``GET /jobs/{id}`` answers (without the interrupt lookup)."""
    job_input = loads(chain.first.get("input"))
    inputs = job_input if isinstance(job_input, dict) else {}
    current = chain.current
    out: dict[str, Any] = {
        "job_id": job_id,
        "status": current["status"],
        "session_id": inputs.get("session_id"),
        "agent_id": inputs.get("agent_id"),
        "started_at": chain.first["startDate"].isoformat(),
        "executions": chain.executions,
    }
    if current.get("stopDate") is not None:
        out["stopped_at"] = current["stopDate"].isoformat()
    if current["status"] == "SUCCEEDED":
        out["result"] = loads(current.get("output"))
    elif current["status"] in ("FAILED", "TIMED_OUT", "ABORTED"):
        out["error"] = {"error": current.get("error"), "cause": current.get("cause")}
    return out


def waiting_on_token(sfn: Any, execution_arn: str, task_token: str) -> bool:
    """Is the execution parked on exactly this task token now?

    The newest event of a waiting execution is the ``TaskSubmitted`` of the
    ``lambda:invoke.waitForTaskToken`` task; the ``TaskScheduled`` before it carries the
    task's parameters as JSON, whose ``Payload.task_token`` is compared whole (a substring
    match on the JSON text would also accept a token that merely contains this one).
    """
    history = sfn.get_execution_history(
        executionArn=execution_arn, reverseOrder=True, maxResults=20
    )
    # Newest first; sorted here too because not every implementation honours reverseOrder.
    events = sorted(history.get("events", []), key=lambda e: int(e.get("id", 0)), reverse=True)
    if not events or events[0].get("type") != "TaskSubmitted":
        return False
    for event in events:
        if event.get("type") == "TaskScheduled":
            details = event.get("taskScheduledEventDetails", {})
            if not str(details.get("resource", "")).endswith(".waitForTaskToken"):
                return False
            parameters = loads(details.get("parameters"))
            payload = parameters.get("Payload") if isinstance(parameters, dict) else None
            return isinstance(payload, dict) and payload.get("task_token") == task_token
    return False
