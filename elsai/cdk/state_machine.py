"""The job state machine (Standard): one RunSlice Lambda call per agent slice.

Data flow (the execution's state stays a handful of ids and counters, never a transcript):

    input  {session_id, agent_id, prompt, agent_function}  (a continuation adds {continued: {...}})
    PinVersion      : agent_function absent -> PinCurrentVersion (this deploy's version)
                      every task invokes $.agent_function, the job's own version (pinning.py)
    StartOrContinue : continued.multi_agent present -> the Graph/Swarm path's next Plan;
                      continued present -> Continue (restore the counters) else Init
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
                                     -> ResumeSlice (interrupt_responses from the answer;
                                        an upgraded job's answer names its new version)
    PrepareHandOff -> HandOff (the continuation, elsai/cdk/continuation.py:
                      states:startExecution of this machine, name <job_id>-c<N>, same job
                      id and session) -> HandedOff -> Continued (Succeed with
                      {status: "continued", continued_in: <execution name>})
    any task error that outlives its retries -> JobFailed (Fail, real Error/Cause);
    States.Timeout -> SliceTimedOut / InterruptWaitTimedOut (static Error/Cause)

The continuation exists because a Standard execution holds at most 25,000 history events
(see ``elsai/cdk/config.py``); the jobs API follows the chain and reports one job.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from elsai.cdk.config import ElsaiConfig
from elsai.cdk.continuation import MULTI_AGENT_FLAG, continuation
from elsai.cdk.function import retention
from elsai.cdk.multi_agent import MultiAgentStates
from elsai.cdk.pinning import grant_version_invokes, pin_version, upgrade_on_resume
from elsai.cdk.tasks import (
    JSON_NULL,
    AgentTask,
    Retries,
    add,
    catch_all,
    invoke_agent,
    job_ids,
    number,
    path,
    task_failed,
)
from elsai.serverless.contract import (
    AGENT_FUNCTION_FIELD,
    COMPLETED,
    CONTINUE,
    INTERRUPTED,
    ORCHESTRATE,
    STATES_TIMEOUT,
)
from elsai.serverless.contract.steps import PARK, RUN_SLICE

__all__ = ["AgentStateMachine"]


class AgentStateMachine(Construct):
    """State machine + its log group; ``state_machine_name`` is fixed for IAM patterns."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        agent_function: lambda_.IFunction,
        current_version: lambda_.IVersion,
        config: ElsaiConfig,
        state_machine_name: str,
    ) -> None:
        super().__init__(scope, construct_id)
        self.state_machine_name = state_machine_name
        self._config = config
        self._retries = Retries(config)
        self._fail_states()
        run_slice = self._run_slice()
        wait = self._wait_for_responses()
        next_slice, resume_slice, resume_upgraded = self._counters()
        check_budget = self._check_budget(run_slice, self._continuation())
        self._route(run_slice, next_slice, wait)
        next_slice.next(check_budget)
        wait.next(upgrade_on_resume(self, resume_slice, resume_upgraded))
        resume_slice.next(check_budget)
        resume_upgraded.next(check_budget)
        self._machine(pin_version(self, current_version, self._start(check_budget)))
        grant_version_invokes(self.state_machine, agent_function)

    # -- the end states ---------------------------------------------------------------------

    def _fail_states(self) -> None:
        config = self._config
        self.job_failed: sfn.Fail = task_failed(
            self, "JobFailed", "A task failed after its retries; Error/Cause are the task's own."
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
        self.fails: dict[str, sfn.Fail] = {
            name: sfn.Fail(self, name, error=name, cause=cause) for name, cause in fixed.items()
        }

    # -- tasks ------------------------------------------------------------------------------

    def _run_slice(self) -> AgentTask:
        run_slice = invoke_agent(
            self,
            "RunSlice",
            comment="One agent slice; retries resume from the session checkpoint.",
            action=RUN_SLICE,
            payload={
                "job_id": path("$.job_id"),
                "execution_id": sfn.JsonPath.execution_id,
                "session_id": path("$.session_id"),
                "agent_id": path("$.agent_id"),
                "prompt": path("$.prompt"),
                "interrupt_responses": sfn.JsonPath.list_at("$.interrupt_responses"),
                "slice": number("$.slice"),
                AGENT_FUNCTION_FIELD: path(f"$.{AGENT_FUNCTION_FIELD}"),
            },
            result_path="$.last",
            timeout_seconds=self._config.task_timeout_seconds,
        )
        self._retries.agent_step(run_slice)
        run_slice.add_catch(
            self.fails["SliceTimedOut"], errors=[STATES_TIMEOUT], result_path="$.error"
        )
        catch_all(run_slice, self.job_failed)
        return run_slice

    def _wait_for_responses(self) -> AgentTask:
        wait = invoke_agent(
            self,
            "WaitForResponses",
            comment="Park the task token in S3; the API answers with SendTaskSuccess.",
            action=PARK,
            payload={
                "task_token": sfn.JsonPath.task_token,
                **job_ids(),
                "interrupts": sfn.JsonPath.list_at("$.last.Payload.interrupts"),
            },
            result_path="$.answer",
            timeout_seconds=self._config.interrupt_wait_seconds,
        )
        self._retries.park(wait)
        wait.add_catch(
            self.fails["InterruptWaitTimedOut"], errors=[STATES_TIMEOUT], result_path="$.error"
        )
        catch_all(wait, self.job_failed)
        return wait

    # -- passes and choices -----------------------------------------------------------------

    def _counters(self) -> tuple[sfn.Pass, sfn.Pass, sfn.Pass]:
        ids = {
            **job_ids(),
            "slice": add("$.slice", 1),
            "prompt.$": JSON_NULL,  # only the first slice carries the prompt
            "model_calls": add("$.model_calls", number("$.last.Payload.model_calls")),
            "execution_slices": add("$.execution_slices", 1),
            "execution_index": number("$.execution_index"),
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
        resume_upgraded = sfn.Pass(
            self,
            "ResumeUpgraded",
            comment="Carry the answers on, on the version the job was upgraded to.",
            parameters={
                **ids,
                AGENT_FUNCTION_FIELD: path(f"$.answer.{AGENT_FUNCTION_FIELD}"),
                "interrupt_responses": sfn.JsonPath.list_at("$.answer.interrupt_responses"),
            },
        )
        return next_slice, resume_slice, resume_upgraded

    def _start(self, check_budget: sfn.IChainable) -> sfn.Choice:
        init = sfn.Pass(
            self,
            "Init",
            comment="Normalize the execution input into the job state.",
            parameters={
                "job_id": sfn.JsonPath.execution_name,
                "session_id": path("$.session_id"),
                "agent_id": path("$.agent_id"),
                AGENT_FUNCTION_FIELD: path(f"$.{AGENT_FUNCTION_FIELD}"),
                "prompt": path("$.prompt"),
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
            # The comment is part of the deployed definition: its wording stays.
            comment="A hand-off from an earlier execution of the same job: restore its counters.",
            parameters={
                "job_id": path(f"{carried}.job_id"),
                "session_id": path("$.session_id"),
                "agent_id": path("$.agent_id"),
                AGENT_FUNCTION_FIELD: path(f"$.{AGENT_FUNCTION_FIELD}"),
                "prompt.$": JSON_NULL,
                "interrupt_responses": sfn.JsonPath.list_at(f"{carried}.interrupt_responses"),
                "slice": number(f"{carried}.slice"),
                "model_calls": number(f"{carried}.model_calls"),
                "execution_slices": 0,
                "execution_index": number(f"{carried}.execution_index"),
            },
        )
        start = sfn.Choice(self, "StartOrContinue")
        start.when(
            sfn.Condition.is_present(f"{carried}.{MULTI_AGENT_FLAG}"),
            self._multi_agent_states.resume,
        )
        start.when(sfn.Condition.is_present(carried), restore.next(check_budget))
        start.otherwise(init.next(check_budget))
        return start

    def _check_budget(
        self, run_slice: sfn.IChainable, next_execution: sfn.IChainable
    ) -> sfn.Choice:
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
            next_execution,
        )
        return check.otherwise(run_slice)

    def _route(self, run_slice: AgentTask, next_slice: sfn.Pass, wait: sfn.IChainable) -> None:
        route = sfn.Choice(self, "RouteOnStatus")
        status = "$.last.Payload.status"
        completed = sfn.Succeed(
            self,
            "Completed",
            comment="Execution output = the final slice's result.",
            output_path="$.last.Payload",
        )
        route.when(sfn.Condition.string_equals(status, COMPLETED), completed)
        route.when(sfn.Condition.string_equals(status, CONTINUE), next_slice)
        route.when(sfn.Condition.string_equals(status, INTERRUPTED), wait)
        route.when(sfn.Condition.string_equals(status, ORCHESTRATE), self._multi_agent())
        route.otherwise(self.fails["UnknownSliceStatus"])
        run_slice.next(route)

    def _multi_agent(self) -> sfn.IChainable:
        """Graph / Swarm jobs: Plan → Map over ready nodes → Fold (constructs/multi_agent.py)."""
        self._multi_agent_states = MultiAgentStates(
            self,
            "MultiAgent",
            config=self._config,
            state_machine_name=self.state_machine_name,
            job_failed=self.job_failed,
        )
        return self._multi_agent_states.start

    def _continuation(self) -> sfn.IChainable:
        """The job goes on in a new execution (elsai/cdk/continuation.py)."""
        return continuation(
            self,
            state_machine_name=self.state_machine_name,
            retries=self._retries,
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
