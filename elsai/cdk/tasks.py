"""The task-building blocks every part of the job state machine shares.

The single-agent path (``state_machine.py``), the Graph/Swarm path (``multi_agent.py``) and
the continuation (``continuation.py``) invoke the agent function, retry and catch the same
way; building those pieces here keeps one definition of each (action, error names and
statuses come from ``elsai.serverless.contract``; each task's step from its registry,
``elsai.serverless.contract.steps``).
"""

from __future__ import annotations

from typing import Any, TypeAlias

import aws_cdk as cdk
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from elsai.cdk.config import ElsaiConfig
from elsai.serverless.contract import (
    AGENT_FUNCTION_FIELD,
    AGENT_FUNCTION_PATH,
    NON_RETRYABLE_ERRORS,
    PARK_RETRYABLE_ERRORS,
    RETRYABLE_ERRORS,
    STATES_ALL,
    THROTTLE_ERRORS,
)
from elsai.serverless.contract.steps import step

# Step Functions has no null literal in Parameters and CDK drops Python None, so the
# JSON null the handler contract asks for is produced by an intrinsic.
JSON_NULL = "States.StringToJson('null')"
#: Where a caught error lands in the state (a Fail state re-raises its Error/Cause).
ERROR_PATH = "$.error"
#: A task state of the agent function (a Lambda invoke of the job's pinned version).
AgentTask: TypeAlias = sfn.CustomState


def path(json_path: str) -> str:
    """A value of the state, taken as is (``"key.$": json_path`` in the rendered ASL)."""
    return sfn.JsonPath.string_at(json_path)


def number(json_path: str) -> Any:
    """A number of the state."""
    return sfn.JsonPath.number_at(json_path)


def add(json_path: str, amount: Any) -> str:
    """A number of the state plus ``amount`` (a counter's next value)."""
    return sfn.JsonPath.math_add(number(json_path), amount)


def job_ids() -> dict[str, Any]:
    """The ids every step carries on: job, session, agent, and the version the job runs on."""
    return {
        "job_id": path("$.job_id"),
        "session_id": path("$.session_id"),
        "agent_id": path("$.agent_id"),
        AGENT_FUNCTION_FIELD: path(AGENT_FUNCTION_PATH),
    }


def task_failed(scope: Construct, construct_id: str, comment: str) -> sfn.Fail:
    """A Fail state that re-raises the caught task error (its own Error and Cause)."""
    return sfn.Fail(
        scope,
        construct_id,
        comment=comment,
        error_path=path(f"{ERROR_PATH}.Error"),
        # Format() turns a null Cause (e.g. SendTaskFailure without one) into "null"
        # instead of a runtime error.
        cause_path=sfn.JsonPath.format("{}", path(f"{ERROR_PATH}.Cause")),
    )


def catch_all(task: sfn.TaskStateBase | sfn.CustomState | sfn.Map, handler: sfn.IChainable) -> None:
    """Any error that outlives the task's retries goes to ``handler`` (at ``$.error``)."""
    task.add_catch(handler, errors=[STATES_ALL], result_path=ERROR_PATH)


def invoke_agent(
    scope: Construct,
    construct_id: str,
    *,
    action: str,
    payload: dict[str, Any],
    timeout_seconds: int,
    result_path: str,
    comment: str | None = None,
) -> AgentTask:
    """One call of the job's agent function version: the step ``action`` with ``payload``.

    The function is the state's ``$.agent_function``: the qualified ARN of the version the job
    started on (or was upgraded to), never the bare function, so a deploy changes no running
    job's code. A park step's call waits for a task token and keeps the whole answer; any other
    keeps only the handler's ``Payload``. Retries are the caller's (``Retries``), in a known
    order. ``payload``'s fields are the step's request model's (an unknown action fails here).
    """
    wait_for_token = step(action).kind == "park"
    resource = f"arn:{cdk.Aws.PARTITION}:states:::lambda:invoke"
    state: dict[str, Any] = {
        "Type": "Task",
        "Resource": resource + (".waitForTaskToken" if wait_for_token else ""),
        "Parameters": {
            "FunctionName.$": AGENT_FUNCTION_PATH,
            "Payload": sfn.FieldUtils.render_object({"action": action, **payload}),
        },
        "ResultPath": result_path,
        "TimeoutSeconds": timeout_seconds,
    }
    if comment is not None:
        state["Comment"] = comment
    if not wait_for_token:
        state["ResultSelector"] = {"Payload.$": "$.Payload"}
    return sfn.CustomState(scope, construct_id, state_json=state)


class Retries:
    """The machine's retry policies, from the deployment's config."""

    def __init__(self, config: ElsaiConfig) -> None:
        self._config = config

    def backoff(self, task: sfn.TaskStateBase | AgentTask, errors: tuple[str, ...]) -> None:
        """Retry ``errors`` with the configured exponential backoff and full jitter."""
        config = self._config
        task.add_retry(
            errors=list(errors),
            interval=cdk.Duration.seconds(config.retry_interval_seconds),
            backoff_rate=config.retry_backoff_rate,
            max_attempts=config.retry_max_attempts,
            max_delay=cdk.Duration.seconds(config.retry_max_delay_seconds),
            jitter_strategy=sfn.JitterType.FULL,
        )

    def throttled(self, task: sfn.TaskStateBase | AgentTask) -> None:
        """Throttling waits longer: a free slot under load is normal, not a broken step."""
        config = self._config
        task.add_retry(
            errors=list(THROTTLE_ERRORS),
            interval=cdk.Duration.seconds(config.throttle_retry_interval_seconds),
            backoff_rate=2.0,
            max_attempts=config.throttle_retry_max_attempts,
            max_delay=cdk.Duration.seconds(config.throttle_retry_max_delay_seconds),
            jitter_strategy=sfn.JitterType.FULL,
        )

    def agent_step(self, task: AgentTask) -> None:
        """A step running agent code: unfixable errors first, then throttling, then the rest.

        The errors no retry can fix come first, unretried, so that the States.TaskFailed
        wildcard of the last Retry never catches them.
        """
        task.add_retry(errors=list(NON_RETRYABLE_ERRORS), max_attempts=0)
        self.throttled(task)
        self.backoff(task, RETRYABLE_ERRORS)

    def park(self, task: AgentTask) -> None:
        """Parking the token: Lambda's own failures only (a timeout or SendTaskFailure ends it)."""
        self.throttled(task)
        self.backoff(task, PARK_RETRYABLE_ERRORS)
