"""The job state machine (Standard): one RunSlice Lambda call per agent slice.

Data flow (the execution's state stays a handful of ids and counters, never a transcript):

    input  {session_id, agent_id, prompt}
    Init            -> {job_id, session_id, agent_id, prompt, interrupt_responses: null, slice: 0}
    CheckSliceBudget: slice >= maxSlices -> SliceBudgetExhausted (Fail)
    RunSlice        -> same + last: {Payload: <handler result>}
    RouteOnStatus   : completed -> Completed (Succeed, output = handler result)
                      continue  -> NextSlice   (prompt/interrupt_responses null, slice+1)
                      interrupted -> WaitForResponses (task token parked in S3)
                                     -> ResumeSlice (interrupt_responses from the answer)
    any task error that outlives its retries -> JobFailed (Fail, real Error/Cause);
    States.Timeout -> SliceTimedOut / InterruptWaitTimedOut (static Error/Cause)

Built with typed CDK states; the synthesized ASL uses only Task(lambda:invoke), Pass,
Choice, Succeed and Fail, which moto's engine also executes.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from infra.config import ElsaiConfig
from infra.constructs.function import retention

# Errors a slice is retried on. Lambda.Unknown is what a hard timeout/crash of the
# function surfaces as; Sandbox.Timedout / Runtime.ExitError are the newer names for
# the same events; States.TaskFailed covers any other error raised by the handler.
RETRYABLE_ERRORS = (
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
    "Lambda.Unknown",
    "Sandbox.Timedout",
    "Runtime.ExitError",
    "States.Timeout",
    "States.TaskFailed",
    "AgentInUseError",  # another live process holds the agent's lease: retry after backoff
)
# Errors that retrying cannot fix; listed first with MaxAttempts 0 so that the
# States.TaskFailed wildcard above never catches them. SessionConflictError = a second
# writer holds the session: retrying would fight it.
# AgentFactoryError = the deployed agent factory is misconfigured: fail at once with its message.
NON_RETRYABLE_ERRORS = ("SessionConflictError", "AgentFactoryError")
# Parking the token: retry only Lambda's own transient failures. States.Timeout here
# means nobody answered in time, and States.TaskFailed would include an API-side
# SendTaskFailure: both must end the job.
PARK_RETRYABLE_ERRORS = (
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
    "Lambda.Unknown",
)
# Step Functions has no null literal in Parameters and CDK drops Python None, so the
# JSON null the handler contract asks for is produced by an intrinsic.
JSON_NULL = "States.StringToJson('null')"


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

        job_failed = sfn.Fail(
            self,
            "JobFailed",
            comment="A task failed after its retries; Error/Cause are the task's own.",
            error_path=sfn.JsonPath.string_at("$.error.Error"),
            # Format() turns a null Cause (e.g. SendTaskFailure without one) into "null"
            # instead of a runtime error.
            cause_path=sfn.JsonPath.format("{}", sfn.JsonPath.string_at("$.error.Cause")),
        )
        # States.Timeout gets static Fail states: the ASL spec reserves the "States."
        # prefix for the engine (moto refuses it in a Fail's ErrorPath), so JobFailed
        # cannot re-raise it.
        slice_timed_out = sfn.Fail(
            self,
            "SliceTimedOut",
            error="SliceTimedOut",
            cause=(
                f"RunSlice exceeded its {config.task_timeout_seconds} s TimeoutSeconds on "
                f"every attempt."
            ),
        )
        wait_timed_out = sfn.Fail(
            self,
            "InterruptWaitTimedOut",
            error="InterruptWaitTimedOut",
            cause=f"No interrupt responses arrived within {config.interrupt_wait_seconds} s.",
        )
        budget_exhausted = sfn.Fail(
            self,
            "SliceBudgetExhausted",
            error="SliceBudgetExhausted",
            cause=f"The job used {config.max_slices} slices without completing.",
        )
        unknown_status = sfn.Fail(
            self,
            "UnknownSliceStatus",
            error="UnknownSliceStatus",
            cause="RunSlice returned a status other than completed/continue/interrupted.",
        )

        init = sfn.Pass(
            self,
            "Init",
            comment="Normalize the execution input into the job state.",
            parameters={
                "job_id": sfn.JsonPath.execution_name,
                "session_id": sfn.JsonPath.string_at("$.session_id"),
                "agent_id": sfn.JsonPath.string_at("$.agent_id"),
                "prompt": sfn.JsonPath.string_at("$.prompt"),
                "interrupt_responses.$": JSON_NULL,
                "slice": 0,
            },
        )
        run_slice = tasks.LambdaInvoke(
            self,
            "RunSlice",
            comment="One agent slice; retries resume from the session checkpoint.",
            lambda_function=agent_function,
            payload=sfn.TaskInput.from_object(
                {
                    "action": "run_slice",
                    "job_id": sfn.JsonPath.string_at("$.job_id"),
                    "execution_id": sfn.JsonPath.execution_id,
                    "session_id": sfn.JsonPath.string_at("$.session_id"),
                    "agent_id": sfn.JsonPath.string_at("$.agent_id"),
                    "prompt": sfn.JsonPath.string_at("$.prompt"),
                    "interrupt_responses": sfn.JsonPath.list_at("$.interrupt_responses"),
                    "slice": sfn.JsonPath.number_at("$.slice"),
                }
            ),
            result_selector={"Payload.$": "$.Payload"},
            result_path="$.last",
            retry_on_service_exceptions=False,  # our own Retry list below, in a known order
            task_timeout=sfn.Timeout.duration(cdk.Duration.seconds(config.task_timeout_seconds)),
        )
        run_slice.add_retry(errors=list(NON_RETRYABLE_ERRORS), max_attempts=0)
        run_slice.add_retry(
            errors=list(RETRYABLE_ERRORS),
            interval=cdk.Duration.seconds(config.retry_interval_seconds),
            backoff_rate=config.retry_backoff_rate,
            max_attempts=config.retry_max_attempts,
            max_delay=cdk.Duration.seconds(config.retry_max_delay_seconds),
            jitter_strategy=sfn.JitterType.FULL,
        )
        run_slice.add_catch(slice_timed_out, errors=["States.Timeout"], result_path="$.error")
        run_slice.add_catch(job_failed, errors=["States.ALL"], result_path="$.error")

        wait_for_responses = tasks.LambdaInvoke(
            self,
            "WaitForResponses",
            comment="Park the task token in S3; the API answers with SendTaskSuccess.",
            lambda_function=agent_function,
            integration_pattern=sfn.IntegrationPattern.WAIT_FOR_TASK_TOKEN,
            payload=sfn.TaskInput.from_object(
                {
                    "action": "park",
                    "task_token": sfn.JsonPath.task_token,
                    "job_id": sfn.JsonPath.string_at("$.job_id"),
                    "session_id": sfn.JsonPath.string_at("$.session_id"),
                    "agent_id": sfn.JsonPath.string_at("$.agent_id"),
                    "interrupts": sfn.JsonPath.list_at("$.last.Payload.interrupts"),
                }
            ),
            result_path="$.answer",
            retry_on_service_exceptions=False,
            task_timeout=sfn.Timeout.duration(cdk.Duration.seconds(config.interrupt_wait_seconds)),
        )
        wait_for_responses.add_retry(
            errors=list(PARK_RETRYABLE_ERRORS),
            interval=cdk.Duration.seconds(config.retry_interval_seconds),
            backoff_rate=config.retry_backoff_rate,
            max_attempts=config.retry_max_attempts,
            max_delay=cdk.Duration.seconds(config.retry_max_delay_seconds),
            jitter_strategy=sfn.JitterType.FULL,
        )
        wait_for_responses.add_catch(
            wait_timed_out, errors=["States.Timeout"], result_path="$.error"
        )
        wait_for_responses.add_catch(job_failed, errors=["States.ALL"], result_path="$.error")

        ids = {
            "job_id": sfn.JsonPath.string_at("$.job_id"),
            "session_id": sfn.JsonPath.string_at("$.session_id"),
            "agent_id": sfn.JsonPath.string_at("$.agent_id"),
            "slice": sfn.JsonPath.math_add(sfn.JsonPath.number_at("$.slice"), 1),
            "prompt.$": JSON_NULL,  # only the first slice carries the prompt
        }
        next_slice = sfn.Pass(
            self,
            "NextSlice",
            comment="Drop the last result and bump the slice counter.",
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
        completed = sfn.Succeed(
            self,
            "Completed",
            comment="Execution output = the final slice's result.",
            output_path="$.last.Payload",
        )

        check_budget = sfn.Choice(self, "CheckSliceBudget")
        check_budget.when(
            sfn.Condition.number_greater_than_equals("$.slice", config.max_slices),
            budget_exhausted,
        ).otherwise(run_slice)

        route = sfn.Choice(self, "RouteOnStatus")
        status = "$.last.Payload.status"
        route.when(sfn.Condition.string_equals(status, "completed"), completed)
        route.when(sfn.Condition.string_equals(status, "continue"), next_slice)
        route.when(sfn.Condition.string_equals(status, "interrupted"), wait_for_responses)
        route.otherwise(unknown_status)

        run_slice.next(route)
        next_slice.next(check_budget)
        wait_for_responses.next(resume_slice)
        resume_slice.next(check_budget)

        self.log_group = logs.LogGroup(
            self,
            "Logs",
            # The vendedlogs prefix keeps CloudWatch's shared resource policy small.
            log_group_name=f"/aws/vendedlogs/states/{state_machine_name}",
            retention=retention(config.log_retention_days),
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            state_machine_name=state_machine_name,
            state_machine_type=sfn.StateMachineType.STANDARD,
            definition_body=sfn.DefinitionBody.from_chainable(init.next(check_budget)),
            tracing_enabled=True,
            logs=sfn.LogOptions(
                destination=self.log_group,
                level=sfn.LogLevel.ALL,
                include_execution_data=False,  # prompts and answers stay out of the logs
            ),
        )
