"""The job state machine (Standard): one RunSlice Lambda call per agent slice.

Data flow (the execution's state stays a handful of ids and counters, never a transcript):

    input  {session_id, agent_id, prompt}            (a hand-off adds {continued: {...}})
    StartOrContinue : continued present -> Continue (restore the counters) else Init
    Init            -> {job_id, session_id, agent_id, prompt, interrupt_responses: null,
                        slice: 0, model_calls: 0, execution_slices: 0, execution_index: 0}
    CheckSliceBudget: slice >= maxSlices -> SliceBudgetExhausted (Fail)
                      model_calls >= maxModelCalls -> ModelCallBudgetExhausted (Fail)
                      execution_slices >= slicesPerExecution -> PrepareHandOff
    RunSlice        -> same + last: {Payload: <handler result>}
    RouteOnStatus   : completed -> Completed (Succeed, output = handler result)
                      orchestrate -> the Graph/Swarm path (elsai/cdk/multi_agent.py)
                      continue  -> NextSlice   (prompt/interrupt_responses null, counters+1)
                      interrupted -> WaitForResponses (task token parked in S3)
                                     -> ResumeSlice (interrupt_responses from the answer)
    PrepareHandOff -> HandOff (states:startExecution of this machine, name <job_id>-c<N>,
                      same job id and session) -> HandedOff -> Continued (Succeed with
                      {status: "continued", continued_in: <execution name>})
    any task error that outlives its retries -> JobFailed (Fail, real Error/Cause);
    States.Timeout -> SliceTimedOut / InterruptWaitTimedOut (static Error/Cause)

The hand-off exists because a Standard execution holds at most 25,000 history events
(see ``elsai/cdk/config.py``); the jobs API follows the chain and reports one job.
"""

from __future__ import annotations

import functools
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from elsai.cdk.config import ElsaiConfig
from elsai.cdk.function import retention
from elsai.cdk.handoff import HAND_OFF_RETRYABLE_ERRORS, JSON_NULL, hand_off
from elsai.cdk.multi_agent import MultiAgentStates

# Errors a slice is retried on. Lambda.Unknown is what a hard timeout/crash of the
# function surfaces as; Sandbox.Timedout / Runtime.ExitError are the newer names for
# the same events; States.TaskFailed covers any other error raised by the handler.
RETRYABLE_ERRORS = (
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.Unknown",
    "Sandbox.Timedout",
    "Runtime.ExitError",
    "States.Timeout",
    "States.TaskFailed",
    "AgentInUseError",  # another live process holds the agent's lease: retry after backoff
)
# Throttling (reserved concurrency reached, or the account's limit) gets its own, longer
# retry: waiting for a free slot is normal under load, not a sign of a broken slice.
THROTTLE_ERRORS = ("Lambda.TooManyRequestsException",)
# Errors that retrying cannot fix; listed first with MaxAttempts 0 so that the
# States.TaskFailed wildcard above never catches them. SessionConflictError = a second
# writer holds the session: retrying would fight it. AgentFactoryError = the deployed agent
# factory is misconfigured: fail at once with its message. ModelAccessDeniedError = the
# account has no access to the model yet (an admin must act). InterruptPayloadTooLargeError =
# the interrupts would not fit the state; the same slice would produce them again.
NON_RETRYABLE_ERRORS = (
    "SessionConflictError",
    "AgentFactoryError",
    "ModelAccessDeniedError",
    "InterruptPayloadTooLargeError",
)
# Parking the token: retry Lambda's own transient failures and crashes of the park call.
# States.Timeout here means nobody answered in time, and States.TaskFailed would include
# an API-side SendTaskFailure: both must end the job.
PARK_RETRYABLE_ERRORS = (
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.Unknown",
    "Sandbox.Timedout",
    "Runtime.ExitError",
)


def _path(path: str) -> str:
    return sfn.JsonPath.string_at(path)


def _add(path: str, amount: Any) -> str:
    return sfn.JsonPath.math_add(sfn.JsonPath.number_at(path), amount)


__all__ = ["JSON_NULL", "AgentStateMachine"]


class AgentStateMachine(Construct):
    """State machine + its log group; ``state_machine_name`` is fixed for IAM patterns."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        agent_function: lambda_.IFunction,
        config: ElsaiConfig,
        state_machine_name: str,
    ) -> None:
        super().__init__(scope, construct_id)
        self.state_machine_name = state_machine_name
        self._config = config
        self._agent_function = agent_function
        self._fail_states()
        run_slice = self._run_slice(agent_function)
        wait = self._wait_for_responses(agent_function)
        next_slice, resume_slice = self._counters()
        check_budget = self._check_budget(run_slice, self._hand_off())
        self._route(run_slice, next_slice, wait)
        next_slice.next(check_budget)
        wait.next(resume_slice)
        resume_slice.next(check_budget)
        self._machine(self._start(check_budget))

    # -- the end states ---------------------------------------------------------------------

    def _fail_states(self) -> None:
        config = self._config
        self.job_failed = sfn.Fail(
            self,
            "JobFailed",
            comment="A task failed after its retries; Error/Cause are the task's own.",
            error_path=_path("$.error.Error"),
            # Format() turns a null Cause (e.g. SendTaskFailure without one) into "null"
            # instead of a runtime error.
            cause_path=sfn.JsonPath.format("{}", _path("$.error.Cause")),
        )
        # States.Timeout gets static Fail states: the ASL spec reserves the "States."
        # prefix for the engine (moto refuses it in a Fail's ErrorPath), so JobFailed
        # cannot re-raise it.
        fixed = {
            "SliceTimedOut": (
                f"RunSlice exceeded its {config.task_timeout_seconds} s TimeoutSeconds on "
                f"every attempt."
            ),
            "InterruptWaitTimedOut": (
                f"No interrupt responses arrived within {config.interrupt_wait_seconds} s."
            ),
            "SliceBudgetExhausted": (
                f"The job used its budget of {config.max_slices} slices (maxSlices) without "
                f"completing; the session is kept and can be resumed by a new job."
            ),
            "ModelCallBudgetExhausted": (
                f"The job made at least {config.max_model_calls} model calls (maxModelCalls, "
                f"checked between slices) without completing; the session is kept."
            ),
            "UnknownSliceStatus": (
                "RunSlice returned a status other than completed/continue/interrupted."
            ),
        }
        self.fails = {
            name: sfn.Fail(self, name, error=name, cause=cause) for name, cause in fixed.items()
        }

    # -- tasks ------------------------------------------------------------------------------

    def _retry_throttled(self, task: tasks.LambdaInvoke) -> None:
        config = self._config
        task.add_retry(
            errors=list(THROTTLE_ERRORS),
            interval=cdk.Duration.seconds(config.throttle_retry_interval_seconds),
            backoff_rate=2.0,
            max_attempts=config.throttle_retry_max_attempts,
            max_delay=cdk.Duration.seconds(config.throttle_retry_max_delay_seconds),
            jitter_strategy=sfn.JitterType.FULL,
        )

    def _retry(self, task: sfn.TaskStateBase, errors: tuple[str, ...]) -> None:
        config = self._config
        task.add_retry(
            errors=list(errors),
            interval=cdk.Duration.seconds(config.retry_interval_seconds),
            backoff_rate=config.retry_backoff_rate,
            max_attempts=config.retry_max_attempts,
            max_delay=cdk.Duration.seconds(config.retry_max_delay_seconds),
            jitter_strategy=sfn.JitterType.FULL,
        )

    def _retry_task(self, task: Any, errors: tuple[str, ...] = RETRYABLE_ERRORS) -> None:
        if errors is RETRYABLE_ERRORS:  # a slice: errors no retry can fix go first, unretried
            task.add_retry(errors=list(NON_RETRYABLE_ERRORS), max_attempts=0)
        self._retry_throttled(task)
        self._retry(task, errors)

    def _run_slice(self, agent_function: lambda_.IFunction) -> tasks.LambdaInvoke:
        run_slice = tasks.LambdaInvoke(
            self,
            "RunSlice",
            comment="One agent slice; retries resume from the session checkpoint.",
            lambda_function=agent_function,
            payload=sfn.TaskInput.from_object(
                {
                    "action": "run_slice",
                    "job_id": _path("$.job_id"),
                    "execution_id": sfn.JsonPath.execution_id,
                    "session_id": _path("$.session_id"),
                    "agent_id": _path("$.agent_id"),
                    "prompt": _path("$.prompt"),
                    "interrupt_responses": sfn.JsonPath.list_at("$.interrupt_responses"),
                    "slice": sfn.JsonPath.number_at("$.slice"),
                }
            ),
            result_selector={"Payload.$": "$.Payload"},
            result_path="$.last",
            retry_on_service_exceptions=False,  # our own Retry list below, in a known order
            task_timeout=sfn.Timeout.duration(
                cdk.Duration.seconds(self._config.task_timeout_seconds)
            ),
        )
        self._retry_task(run_slice)
        run_slice.add_catch(
            self.fails["SliceTimedOut"], errors=["States.Timeout"], result_path="$.error"
        )
        run_slice.add_catch(self.job_failed, errors=["States.ALL"], result_path="$.error")
        return run_slice

    def _wait_for_responses(self, agent_function: lambda_.IFunction) -> tasks.LambdaInvoke:
        wait = tasks.LambdaInvoke(
            self,
            "WaitForResponses",
            comment="Park the task token in S3; the API answers with SendTaskSuccess.",
            lambda_function=agent_function,
            integration_pattern=sfn.IntegrationPattern.WAIT_FOR_TASK_TOKEN,
            payload=sfn.TaskInput.from_object(
                {
                    "action": "park",
                    "task_token": sfn.JsonPath.task_token,
                    "job_id": _path("$.job_id"),
                    "session_id": _path("$.session_id"),
                    "agent_id": _path("$.agent_id"),
                    "interrupts": sfn.JsonPath.list_at("$.last.Payload.interrupts"),
                }
            ),
            result_path="$.answer",
            retry_on_service_exceptions=False,
            task_timeout=sfn.Timeout.duration(
                cdk.Duration.seconds(self._config.interrupt_wait_seconds)
            ),
        )
        self._retry_task(wait, PARK_RETRYABLE_ERRORS)
        wait.add_catch(
            self.fails["InterruptWaitTimedOut"], errors=["States.Timeout"], result_path="$.error"
        )
        wait.add_catch(self.job_failed, errors=["States.ALL"], result_path="$.error")
        return wait

    # -- passes and choices -----------------------------------------------------------------

    def _counters(self) -> tuple[sfn.Pass, sfn.Pass]:
        ids = {
            "job_id": _path("$.job_id"),
            "session_id": _path("$.session_id"),
            "agent_id": _path("$.agent_id"),
            "slice": _add("$.slice", 1),
            "prompt.$": JSON_NULL,  # only the first slice carries the prompt
            "model_calls": _add(
                "$.model_calls", sfn.JsonPath.number_at("$.last.Payload.model_calls")
            ),
            "execution_slices": _add("$.execution_slices", 1),
            "execution_index": sfn.JsonPath.number_at("$.execution_index"),
        }
        next_slice = sfn.Pass(
            self,
            "NextSlice",
            comment="Drop the last result and bump the counters.",
            parameters={**ids, "interrupt_responses.$": JSON_NULL},
        )
        resume_slice = sfn.Pass(
            self,
            "ResumeSlice",
            comment="Carry the API's answers into the next slice.",
            parameters={
                **ids,
                "interrupt_responses": sfn.JsonPath.list_at("$.answer.interrupt_responses"),
            },
        )
        return next_slice, resume_slice

    def _start(self, check_budget: sfn.IChainable) -> sfn.Choice:
        init = sfn.Pass(
            self,
            "Init",
            comment="Normalize the execution input into the job state.",
            parameters={
                "job_id": sfn.JsonPath.execution_name,
                "session_id": _path("$.session_id"),
                "agent_id": _path("$.agent_id"),
                "prompt": _path("$.prompt"),
                "interrupt_responses.$": JSON_NULL,
                "slice": 0,
                "model_calls": 0,
                "execution_slices": 0,
                "execution_index": 0,
            },
        )
        carried = "$.continued"
        restore = sfn.Pass(
            self,
            "Continue",
            comment="A hand-off from an earlier execution of the same job: restore its counters.",
            parameters={
                "job_id": _path(f"{carried}.job_id"),
                "session_id": _path("$.session_id"),
                "agent_id": _path("$.agent_id"),
                "prompt.$": JSON_NULL,
                "interrupt_responses": sfn.JsonPath.list_at(f"{carried}.interrupt_responses"),
                "slice": sfn.JsonPath.number_at(f"{carried}.slice"),
                "model_calls": sfn.JsonPath.number_at(f"{carried}.model_calls"),
                "execution_slices": 0,
                "execution_index": sfn.JsonPath.number_at(f"{carried}.execution_index"),
            },
        )
        start = sfn.Choice(self, "StartOrContinue")
        start.when(sfn.Condition.is_present(carried), restore.next(check_budget))
        start.otherwise(init.next(check_budget))
        return start

    def _check_budget(self, run_slice: sfn.IChainable, hand_off: sfn.IChainable) -> sfn.Choice:
        config = self._config
        check = sfn.Choice(self, "CheckSliceBudget")
        check.when(
            sfn.Condition.number_greater_than_equals("$.slice", config.max_slices),
            self.fails["SliceBudgetExhausted"],
        )
        if config.max_model_calls is not None:
            check.when(
                sfn.Condition.number_greater_than_equals("$.model_calls", config.max_model_calls),
                self.fails["ModelCallBudgetExhausted"],
            )
        check.when(
            sfn.Condition.number_greater_than_equals("$.execution_slices", config.execution_slices),
            hand_off,
        )
        return check.otherwise(run_slice)

    def _route(
        self, run_slice: tasks.LambdaInvoke, next_slice: sfn.Pass, wait: sfn.IChainable
    ) -> None:
        route = sfn.Choice(self, "RouteOnStatus")
        status = "$.last.Payload.status"
        completed = sfn.Succeed(
            self,
            "Completed",
            comment="Execution output = the final slice's result.",
            output_path="$.last.Payload",
        )
        route.when(sfn.Condition.string_equals(status, "completed"), completed)
        route.when(sfn.Condition.string_equals(status, "continue"), next_slice)
        route.when(sfn.Condition.string_equals(status, "interrupted"), wait)
        route.when(sfn.Condition.string_equals(status, "orchestrate"), self._multi_agent())
        route.otherwise(self.fails["UnknownSliceStatus"])
        run_slice.next(route)

    def _multi_agent(self) -> sfn.IChainable:
        """Graph / Swarm jobs: Plan → Map over ready nodes → Fold (constructs/multi_agent.py)."""
        return MultiAgentStates(self, "MultiAgent", agent_function=self._agent_function, config=self._config, retry_slice=self._retry_task, retry_park=functools.partial(self._retry_task, errors=PARK_RETRYABLE_ERRORS)).start  # fmt: skip

    def _hand_off(self) -> sfn.IChainable:
        return hand_off(
            self,
            state_machine_name=self.state_machine_name,
            retry=lambda task: self._retry(task, HAND_OFF_RETRYABLE_ERRORS),
            job_failed=self.job_failed,
        )

    # -- the machine ------------------------------------------------------------------------

    def _machine(self, start: sfn.IChainable) -> None:
        self.log_group = logs.LogGroup(
            self,
            "Logs",
            # No fixed name: the group is retained on destroy, and a fixed name would make
            # the next deploy fail with "already exists". CloudFormation names it uniquely.
            retention=retention(self._config.log_retention_days),
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            state_machine_name=self.state_machine_name,
            state_machine_type=sfn.StateMachineType.STANDARD,
            definition_body=sfn.DefinitionBody.from_chainable(start),
            tracing_enabled=True,
            logs=sfn.LogOptions(
                destination=self.log_group,
                level=sfn.LogLevel.ALL,
                include_execution_data=False,  # prompts and answers stay out of the logs
            ),
        )
