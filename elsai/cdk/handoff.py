"""The hand-off: a long job continues in a new execution of the same state machine.

A Standard execution holds at most 25,000 history events (``elsai/cdk/config.py`` budgets the
slices per execution). At the limit the job starts execution ``<job_id>-c<N>`` with the same
job id, session and counters, and the current execution succeeds with
``{"status": "continued", "continued_in": "<job_id>-c<N>"}``; the jobs API follows the chain.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

# Step Functions has no null literal in Parameters and CDK drops Python None, so the
# JSON null the handler contract asks for is produced by an intrinsic.
JSON_NULL = "States.StringToJson('null')"
CONTINUED_STATUS = "continued"
ALREADY_STARTED = "StepFunctions.ExecutionAlreadyExistsException"
HAND_OFF_RETRYABLE_ERRORS = ("StepFunctions.SfnException", "States.TaskFailed")


def _path(path: str) -> str:
    return sfn.JsonPath.string_at(path)


def _number(path: str) -> Any:
    return sfn.JsonPath.number_at(path)


def hand_off(
    scope: Construct,
    *,
    state_machine_name: str,
    retry: Callable[[tasks.StepFunctionsStartExecution], None],
    job_failed: sfn.IChainable,
) -> sfn.IChainable:
    """PrepareHandOff -> HandOff (states:startExecution) -> HandedOff -> Continued."""
    next_name = sfn.JsonPath.format("{}-c{}", _path("$.job_id"), _path("$.handoff.index"))
    prepare = sfn.Pass(
        scope,
        "PrepareHandOff",
        comment="Number the next execution of this job.",
        parameters={"index": sfn.JsonPath.math_add(_number("$.execution_index"), 1)},
        result_path="$.handoff",
    )
    # The machine's own ARN from its fixed name: a reference to the construct would be
    # a circular dependency of the definition on itself.
    this_machine = sfn.StateMachine.from_state_machine_name(
        scope, "ThisMachine", state_machine_name
    )
    start = tasks.StepFunctionsStartExecution(
        scope,
        "HandOff",
        comment="Continue the job in a new execution before the 25,000-event cap.",
        state_machine=this_machine,
        name=next_name,
        associate_with_parent=False,
        input=sfn.TaskInput.from_object(
            {
                "session_id": _path("$.session_id"),
                "agent_id": _path("$.agent_id"),
                "prompt.$": JSON_NULL,
                "continued": {
                    "job_id": _path("$.job_id"),
                    "slice": _number("$.slice"),
                    "model_calls": _number("$.model_calls"),
                    "interrupt_responses": sfn.JsonPath.list_at("$.interrupt_responses"),
                    "execution_index": _number("$.handoff.index"),
                    "previous_execution": sfn.JsonPath.execution_id,
                },
            }
        ),
        result_path=sfn.JsonPath.DISCARD,
    )
    handed_off = sfn.Pass(
        scope,
        "HandedOff",
        comment="The job goes on in the next execution; GET /jobs/{id} follows it.",
        parameters={
            "status": CONTINUED_STATUS,
            "job_id": _path("$.job_id"),
            "continued_in": next_name,
            "slice": _number("$.slice"),
        },
    )
    # A retried start whose first attempt did succeed finds the execution there: done.
    start.add_retry(errors=[ALREADY_STARTED], max_attempts=0)
    retry(start)
    start.add_catch(handed_off, errors=[ALREADY_STARTED], result_path="$.error")
    start.add_catch(job_failed, errors=["States.ALL"], result_path="$.error")
    handed_off.next(sfn.Succeed(scope, "Continued", comment="Handed off; not the job's end."))
    return prepare.next(start.next(handed_off))
