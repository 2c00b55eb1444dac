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
                  interrupts of the batch, each naming its node) -> UpgradeNodesOnResume
                  -> ResumeNodes (or ResumeNodesUpgraded: the answer names a version) -> Plan

Interrupts are collected at the fold, not inside a branch: the batch's other nodes finish,
one parked token covers every interrupted node (as `graph(task)` stops after its batch),
and the answers go to the nodes that asked. Payloads carry names, statuses and counters.
A Swarm runs the same loop with a batch of one: the current node.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from elsai.cdk.config import ElsaiConfig
from elsai.cdk.pinning import upgrade_on_resume
from elsai.cdk.tasks import (
    JSON_NULL,
    AgentTask,
    Retries,
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
    FAILED,
    FOLD,
    INTERRUPTED,
    NODE_SLICE,
    PARK,
    PLAN,
    RUN,
)


class MultiAgentStates(Construct):
    """The states above; `start` is where RunSlice's "orchestrate" status leads."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: ElsaiConfig,
    ) -> None:
        super().__init__(scope, construct_id)
        self._config = config
        self._retries = Retries(config)
        self.step_failed = task_failed(
            self,
            "MultiAgentStepFailed",
            "Plan / Fold / the wait failed after its retries; Error/Cause are its own.",
        )
        self.run_failed = sfn.Fail(
            self,
            "MultiAgentFailed",
            comment="The run failed: a node failed (its name and cause), or a limit ended it.",
            error="MultiAgentFailed",
            cause_path=path("$.plan.Payload.error"),
        )
        self.start = self._states()

    def _states(self) -> sfn.IChainable:
        plan = self._step("Plan", PLAN, {"prompt": path("$.prompt")})
        fold = self._step(
            "Fold",
            FOLD,
            {
                "batch": number("$.plan.Payload.batch"),
                "results": sfn.JsonPath.list_at("$.batch"),
            },
        )
        nodes = self._map()
        wait = self._wait()
        next_batch = sfn.Pass(
            self,
            "NextBatch",
            parameters={**job_ids(), "prompt.$": JSON_NULL, "interrupt_responses.$": JSON_NULL},
        )
        resume = sfn.Pass(
            self,
            "ResumeNodes",
            comment="Carry the API's answers to the interrupted nodes of the batch.",
            parameters={
                **job_ids(),
                "prompt.$": JSON_NULL,
                "interrupt_responses": sfn.JsonPath.list_at("$.answer.interrupt_responses"),
            },
        )
        resume_upgraded = sfn.Pass(
            self,
            "ResumeNodesUpgraded",
            comment="Carry the answers on, on the version the job was upgraded to.",
            parameters={
                **job_ids(),
                AGENT_FUNCTION_FIELD: path(f"$.answer.{AGENT_FUNCTION_FIELD}"),
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
        wait.next(upgrade_on_resume(self, resume, resume_upgraded, "UpgradeNodesOnResume"))
        resume.next(plan)
        resume_upgraded.next(plan)  # the plan compares fingerprints: a removed node fails
        return sfn.Pass(
            self,
            "StartMultiAgent",
            comment="The factory built a Graph or Swarm: keep the ids, prompt and answers.",
            parameters={
                **job_ids(),
                "prompt": path("$.prompt"),
                "interrupt_responses.$": JSON_NULL,
            },
        ).next(plan)

    def _step(self, name: str, action: str, extra: dict[str, Any]) -> AgentTask:
        task = invoke_agent(
            self,
            name,
            payload={
                "action": action,
                "execution_id": sfn.JsonPath.execution_id,
                **job_ids(),
                **extra,
            },
            result_path="$.plan",
            timeout_seconds=self._config.task_timeout_seconds,
        )
        self._retries.agent_step(task)
        catch_all(task, self.step_failed)
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
        route.when(sfn.Condition.string_equals(status, RUN), more)
        route.when(sfn.Condition.string_equals(status, COMPLETED), completed)
        if wait is not None:
            route.when(sfn.Condition.string_equals(status, INTERRUPTED), wait)
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
                **job_ids(),
                "node": path(f"{item}.node"),
                "started_at": number(f"{item}.started_at"),
                "interrupt_responses": sfn.JsonPath.list_at("$.interrupt_responses"),
                "slice": 0,
            },
            result_path="$.batch",
        )
        nodes.item_processor(self._branch())
        catch_all(nodes, self.step_failed)
        return nodes

    def _branch(self) -> sfn.IChainable:
        node_ids = {**job_ids(), "node": path("$.node"), "started_at": number("$.started_at")}
        node_slice = invoke_agent(
            self,
            "NodeSlice",
            comment="One slice of one node; retries resume from the node's checkpoint.",
            payload={
                "action": NODE_SLICE,
                "execution_id": sfn.JsonPath.execution_id,
                **node_ids,
                "interrupt_responses": sfn.JsonPath.list_at("$.interrupt_responses"),
                "slice": number("$.slice"),
            },
            result_path="$.last",
            timeout_seconds=self._config.task_timeout_seconds,
        )
        self._retries.agent_step(node_slice)
        errored = sfn.Pass(
            self,
            "NodeErrored",
            comment="The node's slice failed after its retries: report the node failed, with the cause.",
            parameters={
                "node": path("$.node"),
                "status": FAILED,
                "error": sfn.JsonPath.object_at("$.error"),
            },
        )
        catch_all(node_slice, errored)
        next_slice = sfn.Pass(
            self,
            "NextNodeSlice",
            comment="The node stopped at its deadline: its next slice resumes from the bookmark.",
            parameters={
                **node_ids,
                "interrupt_responses.$": JSON_NULL,
                "slice": sfn.JsonPath.math_add(number("$.slice"), 1),
            },
        )
        next_slice.next(node_slice)
        return node_slice.next(self._node_route(next_slice))

    def _node_route(self, next_slice: sfn.IChainable) -> sfn.Choice:
        report = sfn.Pass(self, "NodeReport", output_path="$.last.Payload")
        budget = self._config.max_slices
        exhausted = sfn.Pass(
            self,
            "NodeSliceBudgetExhausted",
            comment="The node used maxSlices slices without finishing: report it failed.",
            parameters={"node": path("$.node"), "status": FAILED,
                        "error": f"the node used its budget of {budget} slices (maxSlices) without finishing"},
        )  # fmt: skip
        route = sfn.Choice(self, "NodeRoute")
        more = sfn.Condition.string_equals("$.last.Payload.status", CONTINUE)
        route.when(
            sfn.Condition.and_(
                more, sfn.Condition.number_greater_than_equals("$.slice", budget - 1)
            ),
            exhausted,
        )
        route.when(more, next_slice)
        return route.otherwise(report)

    def _wait(self) -> AgentTask:
        wait = invoke_agent(
            self,
            "WaitForNodeResponses",
            comment="Park the task token with the batch's interrupts; the API answers them.",
            wait_for_token=True,
            payload={
                "action": PARK,
                "task_token": sfn.JsonPath.task_token,
                **job_ids(),
                "interrupts": sfn.JsonPath.list_at("$.plan.Payload.interrupts"),
            },
            result_path="$.answer",
            timeout_seconds=self._config.interrupt_wait_seconds,
        )
        self._retries.park(wait)
        catch_all(wait, self.step_failed)
        return wait
