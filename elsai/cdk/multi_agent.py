"""The multi-agent path of the job state machine: Plan → Map(node branches) → Fold → Choice.

RunSlice reports status "orchestrate" when the factory built a Graph or a Swarm; the job
then continues here (the single-agent path is untouched):

    Plan        : Lambda {action: plan}   -> $.plan = {status, nodes: [{node, started_at}], batch}
    PlanRoute   : run -> Nodes; completed -> MultiAgentCompleted; failed -> MultiAgentFailed
    Nodes (Map) : one branch per ready node, at most maxParallelNodes at once; a branch is
                  the RunSlice loop for one node:
                    NodeSlice (Retry on Lambda errors: the node resumes from its own
                    checkpoint) -> NodeRoute: continue -> NextNodeSlice -> NodeSlice
                    (after maxSlices slices: NodeSliceBudgetExhausted, the node failed);
                    completed / interrupted / failed -> NodeReport (the branch's output);
                    an error that outlives its retries -> NodeErrored (status "failed")
    Fold        : Lambda {action: fold, batch, results: $.batch} -> $.plan (same shape)
    FoldRoute   : run -> NextBatch -> Plan; completed / failed as above;
                  interrupted -> WaitForNodeResponses (task token parked, all pending
                  interrupts of the batch, each naming its node) -> ResumeNodes -> Plan

Interrupts are collected at the fold, not inside a branch: the batch's other nodes finish,
one parked token covers every interrupted node (as `graph(task)` stops after its batch),
and the answers go to the nodes that asked. Payloads carry names, statuses and counters.
A Swarm runs the same loop with a batch of one: the current node.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from elsai.cdk.config import ElsaiConfig
from elsai.cdk.handoff import JSON_NULL

Retry = Callable[[tasks.LambdaInvoke], None]


def _path(path: str) -> str:
    return sfn.JsonPath.string_at(path)


def _ids() -> dict[str, Any]:
    return {
        "job_id": _path("$.job_id"),
        "session_id": _path("$.session_id"),
        "agent_id": _path("$.agent_id"),
    }


class MultiAgentStates(Construct):
    """The states above; `start` is where RunSlice's "orchestrate" status leads."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        agent_function: lambda_.IFunction,
        config: ElsaiConfig,
        retry_slice: Retry,
        retry_park: Retry,
    ) -> None:
        super().__init__(scope, construct_id)
        self._fn, self._config = agent_function, config
        self._retry_slice, self._retry_park = retry_slice, retry_park
        self.step_failed = sfn.Fail(
            self,
            "MultiAgentStepFailed",
            comment="Plan / Fold / the wait failed after its retries; Error/Cause are its own.",
            error_path=_path("$.error.Error"),
            cause_path=sfn.JsonPath.format("{}", _path("$.error.Cause")),
        )
        self.run_failed = sfn.Fail(
            self,
            "MultiAgentFailed",
            comment="The run failed: a node failed (its name and cause), or a limit ended it.",
            error="MultiAgentFailed",
            cause_path=_path("$.plan.Payload.error"),
        )
        plan = self._step("Plan", "plan", {"prompt": _path("$.prompt")})
        fold = self._step(
            "Fold",
            "fold",
            {
                "batch": sfn.JsonPath.number_at("$.plan.Payload.batch"),
                "results": sfn.JsonPath.list_at("$.batch"),
            },
        )
        nodes = self._map()
        wait = self._wait()
        next_batch = sfn.Pass(
            self,
            "NextBatch",
            parameters={**_ids(), "prompt.$": JSON_NULL, "interrupt_responses.$": JSON_NULL},
        )
        resume = sfn.Pass(
            self,
            "ResumeNodes",
            comment="Carry the API's answers to the interrupted nodes of the batch.",
            parameters={
                **_ids(),
                "prompt.$": JSON_NULL,
                "interrupt_responses": sfn.JsonPath.list_at("$.answer.interrupt_responses"),
            },
        )
        # A Pass shapes the output: cfn-lint (wrongly) flags OutputPath on a Succeed state.
        completed = sfn.Pass(
            self,
            "MultiAgentResult",
            comment="Output = the run's result.",
            output_path="$.plan.Payload",
        ).next(sfn.Succeed(self, "MultiAgentCompleted"))
        plan.next(self._route("PlanRoute", nodes, completed, None))
        nodes.next(fold)
        fold.next(self._route("FoldRoute", next_batch, completed, wait))
        next_batch.next(plan)
        wait.next(resume)
        resume.next(plan)
        self.start = sfn.Pass(
            self,
            "StartMultiAgent",
            comment="The factory built a Graph or Swarm: keep the ids, prompt and answers.",
            parameters={
                **_ids(),
                "prompt": _path("$.prompt"),
                "interrupt_responses.$": JSON_NULL,
            },
        ).next(plan)

    def _step(self, name: str, action: str, extra: dict[str, Any]) -> tasks.LambdaInvoke:
        task = tasks.LambdaInvoke(
            self,
            name,
            lambda_function=self._fn,
            payload=sfn.TaskInput.from_object(
                {"action": action, "execution_id": sfn.JsonPath.execution_id, **_ids(), **extra}
            ),
            result_selector={"Payload.$": "$.Payload"},
            result_path="$.plan",
            retry_on_service_exceptions=False,
            task_timeout=sfn.Timeout.duration(
                cdk.Duration.seconds(self._config.task_timeout_seconds)
            ),
        )
        self._retry_slice(task)
        task.add_catch(self.step_failed, errors=["States.ALL"], result_path="$.error")
        return task

    def _route(
        self,
        name: str,
        more: sfn.IChainable,
        completed: sfn.IChainable,
        wait: sfn.IChainable | None,
    ) -> sfn.Choice:
        status = "$.plan.Payload.status"
        route = sfn.Choice(self, name)
        route.when(sfn.Condition.string_equals(status, "run"), more)
        route.when(sfn.Condition.string_equals(status, "completed"), completed)
        if wait is not None:
            route.when(sfn.Condition.string_equals(status, "interrupted"), wait)
        return route.otherwise(self.run_failed)

    def _map(self) -> sfn.Map:
        item = "$$.Map.Item.Value"
        nodes = sfn.Map(
            self,
            "Nodes",
            comment="One branch per ready node; each branch is that node's slice loop.",
            items_path="$.plan.Payload.nodes",
            max_concurrency=self._config.max_parallel_nodes,
            item_selector={
                **_ids(),
                "node": _path(f"{item}.node"),
                "started_at": sfn.JsonPath.number_at(f"{item}.started_at"),
                "interrupt_responses": sfn.JsonPath.list_at("$.interrupt_responses"),
                "slice": 0,
            },
            result_path="$.batch",
        )
        nodes.item_processor(self._branch())
        nodes.add_catch(self.step_failed, errors=["States.ALL"], result_path="$.error")
        return nodes

    def _branch(self) -> sfn.IChainable:
        node_ids = {
            **_ids(),
            "node": _path("$.node"),
            "started_at": sfn.JsonPath.number_at("$.started_at"),
        }
        node_slice = tasks.LambdaInvoke(
            self,
            "NodeSlice",
            comment="One slice of one node; retries resume from the node's checkpoint.",
            lambda_function=self._fn,
            payload=sfn.TaskInput.from_object(
                {
                    "action": "node_slice",
                    "execution_id": sfn.JsonPath.execution_id,
                    **node_ids,
                    "interrupt_responses": sfn.JsonPath.list_at("$.interrupt_responses"),
                    "slice": sfn.JsonPath.number_at("$.slice"),
                }
            ),
            result_selector={"Payload.$": "$.Payload"},
            result_path="$.last",
            retry_on_service_exceptions=False,
            task_timeout=sfn.Timeout.duration(
                cdk.Duration.seconds(self._config.task_timeout_seconds)
            ),
        )
        self._retry_slice(node_slice)
        errored = sfn.Pass(
            self,
            "NodeErrored",
            comment="The node's slice failed after its retries: report the node failed, with the cause.",
            parameters={
                "node": _path("$.node"),
                "status": "failed",
                "error": sfn.JsonPath.object_at("$.error"),
            },
        )
        node_slice.add_catch(errored, errors=["States.ALL"], result_path="$.error")
        next_slice = sfn.Pass(
            self,
            "NextNodeSlice",
            comment="The node stopped at its deadline: its next slice resumes from the bookmark.",
            parameters={
                **node_ids,
                "interrupt_responses.$": JSON_NULL,
                "slice": sfn.JsonPath.math_add(sfn.JsonPath.number_at("$.slice"), 1),
            },
        )
        report = sfn.Pass(self, "NodeReport", output_path="$.last.Payload")
        budget = self._config.max_slices
        exhausted = sfn.Pass(
            self,
            "NodeSliceBudgetExhausted",
            comment="The node used maxSlices slices without finishing: report it failed.",
            parameters={"node": _path("$.node"), "status": "failed",
                        "error": f"the node used its budget of {budget} slices (maxSlices) without finishing"},
        )  # fmt: skip
        route = sfn.Choice(self, "NodeRoute")
        more = sfn.Condition.string_equals("$.last.Payload.status", "continue")
        route.when(
            sfn.Condition.and_(
                more, sfn.Condition.number_greater_than_equals("$.slice", budget - 1)
            ),
            exhausted,
        )
        route.when(more, next_slice)
        route.otherwise(report)
        next_slice.next(node_slice)
        return node_slice.next(route)

    def _wait(self) -> tasks.LambdaInvoke:
        wait = tasks.LambdaInvoke(
            self,
            "WaitForNodeResponses",
            comment="Park the task token with the batch's interrupts; the API answers them.",
            lambda_function=self._fn,
            integration_pattern=sfn.IntegrationPattern.WAIT_FOR_TASK_TOKEN,
            payload=sfn.TaskInput.from_object(
                {
                    "action": "park",
                    "task_token": sfn.JsonPath.task_token,
                    **_ids(),
                    "interrupts": sfn.JsonPath.list_at("$.plan.Payload.interrupts"),
                }
            ),
            result_path="$.answer",
            retry_on_service_exceptions=False,
            task_timeout=sfn.Timeout.duration(
                cdk.Duration.seconds(self._config.interrupt_wait_seconds)
            ),
        )
        self._retry_park(wait)
        wait.add_catch(self.step_failed, errors=["States.ALL"], result_path="$.error")
        return wait
