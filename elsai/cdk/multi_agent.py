"""The multi-agent path of the job state machine: Plan → Map(node branches) → Fold → Choice.

RunSlice reports status "orchestrate" when the factory built a Graph or a Swarm; the job
then continues here (the single-agent path is untouched):

    Plan        : Lambda {action: plan}   -> $.plan = {status, nodes: [{node, started_at}], batch}
    PlanRoute   : run -> Nodes; completed -> MultiAgentCompleted; failed -> MultiAgentFailed;
                  interrupted (only nodes waiting for people are left) -> WaitForNodeResponses
                  (one task token parked beside the job's node waits) -> UpgradeNodesOnResume
                  -> ResumeNodes (or ResumeNodesUpgraded) -> CheckBatchBudget -> Plan;
                  answers stored before the park (AnswersWaitingError) -> ResumeNodes
    Nodes (Map) : one branch per ready node, at most maxParallelNodes at once; a branch is
                  the RunSlice loop for one node:
                    NodeSlice (Retry on Lambda errors: the node resumes from its own
                    checkpoint) -> NodeRoute: continue -> NextNodeSlice -> NodeSlice
                    (after maxSlices slices: NodeSliceBudgetExhausted, the node failed);
                    completed / interrupted / failed -> NodeReport (the branch's output);
                    an error that outlives its retries -> NodeErrored (status "failed")
    Fold        : Lambda {action: fold, batch, results: $.batch, the job's slice and model
                  call totals and budgets} -> $.plan (same shape, + the batch's slices and
                  model calls; a crossed budget fails the run naming the node)
    FoldRoute   : run / interrupted -> NextBatch -> CheckBatchBudget; completed / failed as above
    CheckBatchBudget: this execution's slices (node slices + each batch's own states) >=
                  slicesPerExecution -> MultiAgentPrepareHandOff (the continuation: the next
                  execution starts at ContinueMultiAgent -> Plan); else Plan

An interrupted node ends its branch; Fold records its wait (`elsai.serverless.node_waits`)
and Plan keeps scheduling every node that does not depend on it, so one branch waiting for a
person holds back no sibling. An answer is stored for its node, which the next Plan runs
with its own answers (the Map item's `interrupt_responses`); the job parks a token only when
nothing but waits is left. Payloads carry names, statuses and counters.
A Swarm runs the same loop with a batch of one: the current node.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from elsai.cdk.config import ElsaiConfig
from elsai.cdk.continuation import continuation
from elsai.cdk.pinning import upgrade_on_resume
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
    ANSWERS_WAITING_ERROR,
    COMPLETED,
    CONTINUE,
    FAILED,
    INTERRUPTED,
    RUN,
)
from elsai.serverless.contract.steps import FOLD, NODE_SLICE, PARK_NODES, PLAN


def model_call_budget(config: ElsaiConfig) -> dict[str, Any]:
    """Fold's maxModelCalls, when the job has one."""
    if config.max_model_calls is None:
        return {}
    return {"max_model_calls": config.max_model_calls}


def counters(slices: str, overhead: int) -> dict[str, Any]:
    """The job's counters after a batch: its node slices count toward the job and this execution.

    This execution's count also takes `overhead`: the batch's own states, in slices.
    """
    return {
        "slice": add("$.slice", number(slices)),
        "model_calls": add("$.model_calls", number("$.plan.Payload.model_calls")),
        # nested intrinsics (CDK's math_add takes numbers only)
        "execution_slices.$": f"States.MathAdd($.execution_slices, States.MathAdd({slices}, {overhead}))",
        "execution_index": number("$.execution_index"),
    }


class MultiAgentStates(Construct):
    """The states above; `start` is where RunSlice's "orchestrate" status leads."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: ElsaiConfig,
        state_machine_name: str,
        job_failed: sfn.IChainable,
    ) -> None:
        super().__init__(scope, construct_id)
        self._config = config
        self._machine_name, self._job_failed = state_machine_name, job_failed
        self._retries = Retries(config)
        self.step_failed: sfn.Fail = task_failed(
            self,
            "MultiAgentStepFailed",
            "Plan / Fold / the wait failed after its retries; Error/Cause are its own.",
        )
        self.run_failed = sfn.Fail(
            self,
            "MultiAgentFailed",
            comment="The run failed: a node failed (its name and cause), or a limit ended it.",
            error_path=path("$.plan.Payload.error_type"),
            cause_path=path("$.plan.Payload.error"),
        )
        self.start, self.resume = self._states()

    def _states(self) -> tuple[sfn.IChainable, sfn.IChainable]:
        plan = self._step("Plan", PLAN, {"prompt": path("$.prompt")})
        fold = self._step(
            "Fold",
            FOLD,
            {
                "batch": number("$.plan.Payload.batch"),
                "results": sfn.JsonPath.list_at("$.batch"),
                # every node's slices and model calls count toward the job's budgets
                "slice": number("$.slice"),
                "model_calls": number("$.model_calls"),
                "max_slices": self._config.max_slices,
                **model_call_budget(self._config),
            },
        )
        nodes = self._map()
        wait = self._wait()
        next_batch = sfn.Pass(
            self,
            "NextBatch",
            comment="Count the batch's node slices (and Plan/Fold) against this execution's budget.",
            parameters={
                **job_ids(),
                "prompt.$": JSON_NULL,
                "interrupt_responses.$": JSON_NULL,
                **counters("$.plan.Payload.slices", self._config.slices_per_batch),
            },
        )
        woken = {
            **job_ids(),
            "prompt.$": JSON_NULL,
            "interrupt_responses.$": JSON_NULL,
            # Plan's own slices (none) and this park's states, counted like a batch's
            **counters("$.plan.Payload.slices", self._config.slices_per_batch),
        }
        resume = sfn.Pass(
            self,
            "ResumeNodes",
            comment="Nodes were answered (their answers are stored): plan again.",
            parameters=woken,
        )
        resume_upgraded = sfn.Pass(
            self,
            "ResumeNodesUpgraded",
            comment="Plan again, on the version the job was upgraded to.",
            parameters={**woken, AGENT_FUNCTION_FIELD: path(f"$.answer.{AGENT_FUNCTION_FIELD}")},
        )
        # answers stored before the park: plan again at once instead of sleeping on them
        wait.add_catch(resume, errors=[ANSWERS_WAITING_ERROR], result_path="$.answer")
        catch_all(wait, self.step_failed)
        # A Pass shapes the output: cfn-lint (wrongly) flags OutputPath on a Succeed state.
        completed = sfn.Pass(
            self,
            "MultiAgentResult",
            comment="Output = the run's result.",
            output_path="$.plan.Payload",
        ).next(sfn.Succeed(self, "MultiAgentCompleted"))
        budget = self._budget(plan)
        plan.next(self._route("PlanRoute", nodes, completed, wait))
        nodes.next(fold)
        # a fold that leaves only waits goes through Plan too: answers may already be stored
        fold.next(self._route("FoldRoute", next_batch, completed, next_batch))
        next_batch.next(budget)
        wait.next(upgrade_on_resume(self, resume, resume_upgraded, "UpgradeNodesOnResume"))
        resume.next(budget)
        resume_upgraded.next(budget)  # the plan compares fingerprints: a removed node fails
        return self._entries(plan)

    def _entries(self, plan: sfn.IChainable) -> tuple[sfn.IChainable, sfn.IChainable]:
        """Where the path starts: from RunSlice's "orchestrate", or in a continued execution."""
        start = sfn.Pass(
            self,
            "StartMultiAgent",
            comment="The factory built a Graph or Swarm: keep the ids, prompt, answers and counters.",
            parameters={
                **job_ids(),
                "prompt": path("$.prompt"),
                "interrupt_responses.$": JSON_NULL,
                "slice": add("$.slice", 1),
                "model_calls": number("$.model_calls"),
                "execution_slices": add("$.execution_slices", 1),
                "execution_index": number("$.execution_index"),
            },
        ).next(plan)
        carried = "$.continued"
        restore = sfn.Pass(
            self,
            "ContinueMultiAgent",
            comment="A Graph or Swarm job continued from its earlier execution: back to Plan.",
            parameters={
                **job_ids(),
                "job_id": path(f"{carried}.job_id"),
                "prompt.$": JSON_NULL,
                "interrupt_responses": sfn.JsonPath.list_at(f"{carried}.interrupt_responses"),
                "slice": number(f"{carried}.slice"),
                "model_calls": number(f"{carried}.model_calls"),
                "execution_slices": 0,
                "execution_index": number(f"{carried}.execution_index"),
            },
        ).next(plan)
        return start, restore

    def _budget(self, plan: sfn.IChainable) -> sfn.Choice:
        """Between batches: continue in a new execution once this one used its slice budget."""
        check = sfn.Choice(self, "CheckBatchBudget")
        check.when(
            sfn.Condition.number_greater_than_equals(
                "$.execution_slices", self._config.execution_slices
            ),
            continuation(
                self,
                state_machine_name=self._machine_name,
                retries=self._retries,
                job_failed=self._job_failed,
                prefix="MultiAgent",
                multi_agent=True,
            ),
        )
        return check.otherwise(plan)

    def _step(self, name: str, action: str, extra: dict[str, Any]) -> AgentTask:
        task = invoke_agent(
            self,
            name,
            action=action,
            payload={
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
        wait: sfn.IChainable,
    ) -> sfn.Choice:
        status = "$.plan.Payload.status"
        route = sfn.Choice(self, name)
        route.when(sfn.Condition.string_equals(status, RUN), more)
        route.when(sfn.Condition.string_equals(status, COMPLETED), completed)
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
                # each node its own answers (null unless its wait was answered)
                "interrupt_responses": sfn.JsonPath.list_at(f"{item}.interrupt_responses"),
                "slice": 0,
                "model_calls": 0,
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
            action=NODE_SLICE,
            payload={
                "execution_id": sfn.JsonPath.execution_id,
                **node_ids,
                "interrupt_responses": sfn.JsonPath.list_at("$.interrupt_responses"),
                "slice": number("$.slice"),
                "model_calls": number("$.model_calls"),
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
                "slice": number("$.slice"),
                "node_model_calls": number("$.model_calls"),
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
                "model_calls": number("$.last.Payload.node_model_calls"),
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
            parameters={"node": path("$.node"), "status": FAILED, "slice": number("$.slice"),
                        "node_model_calls": number("$.last.Payload.node_model_calls"),
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
            comment="Only waits are left: park one token; an answer to any node wakes Plan.",
            action=PARK_NODES,
            payload={
                "task_token": sfn.JsonPath.task_token,
                **job_ids(),
                "interrupts": sfn.JsonPath.list_at("$.plan.Payload.interrupts"),
            },
            result_path="$.answer",
            timeout_seconds=self._config.interrupt_wait_seconds,
        )
        self._retries.park(wait)
        return wait
