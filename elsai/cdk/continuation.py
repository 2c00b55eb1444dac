"""The continuation: a long job continues in a new execution of the same state machine.

A Standard execution holds at most 25,000 history events (``elsai/cdk/config.py`` budgets the
slices per execution). At the limit the job starts execution ``<job_id>-c<N>`` with the same
job id, session and counters, and the current execution succeeds with
``{"status": "continued", "continued_in": "<job_id>-c<N>"}``; the jobs API follows the chain.

The state names (``PrepareHandOff``, ``HandOff``, ``HandedOff``), the ``$.handoff`` state
field and the states' comments predate the name "continuation" and stay as they are: they
are part of the deployed definition, and the jobs API's history reports the state names.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_stepfunctions as sfn
from aws_cdk import aws_stepfunctions_tasks as tasks
from constructs import Construct

from elsai.cdk.tasks import ERROR_PATH, JSON_NULL, Retries, catch_all, number, path
from elsai.serverless.contract import (
    AGENT_FUNCTION_FIELD,
    CONTINUATION_RETRYABLE_ERRORS,
    CONTINUED,
    EXECUTION_ALREADY_EXISTS,
)

#: Where the next execution's number is kept (a deployed state field: name kept).
NEXT_EXECUTION = "$.handoff"
#: In ``continued``: the job is a Graph or Swarm run, continued at its next Plan.
MULTI_AGENT_FLAG = "multi_agent"


def continuation(
    scope: Construct,
    *,
    state_machine_name: str,
    retries: Retries,
    job_failed: sfn.IChainable,
    prefix: str = "",
    multi_agent: bool = False,
) -> sfn.IChainable:
    """PrepareHandOff -> HandOff (states:startExecution) -> HandedOff -> Continued.

    A Graph or Swarm job has its own copy of these states, named with `prefix` (state names
    are unique in a machine); its next execution goes straight back to Plan (`multi_agent`).
    """
    next_name = sfn.JsonPath.format("{}-c{}", path("$.job_id"), path(f"{NEXT_EXECUTION}.index"))
    prepare = sfn.Pass(
        scope,
        f"{prefix}PrepareHandOff",
        comment="Number the next execution of this job.",
        parameters={"index": sfn.JsonPath.math_add(number("$.execution_index"), 1)},
        result_path=NEXT_EXECUTION,
    )
    # The machine's own ARN from its fixed name: a reference to the construct would be
    # a circular dependency of the definition on itself.
    this_machine = sfn.StateMachine.from_state_machine_name(
        scope, f"{prefix}ThisMachine", state_machine_name
    )
    start = tasks.StepFunctionsStartExecution(
        scope,
        f"{prefix}HandOff",
        comment="Continue the job in a new execution before the 25,000-event cap.",
        state_machine=this_machine,
        name=next_name,
        associate_with_parent=False,
        input=sfn.TaskInput.from_object(_next_input(multi_agent)),
        result_path=sfn.JsonPath.DISCARD,
    )
    continued = sfn.Pass(
        scope,
        f"{prefix}HandedOff",
        comment="The job goes on in the next execution; GET /jobs/{id} follows it.",
        parameters={
            "status": CONTINUED,
            "job_id": path("$.job_id"),
            "continued_in": next_name,
            "slice": number("$.slice"),
        },
    )
    # A retried start whose first attempt did succeed finds the execution there: done.
    start.add_retry(errors=[EXECUTION_ALREADY_EXISTS], max_attempts=0)
    retries.backoff(start, CONTINUATION_RETRYABLE_ERRORS)
    start.add_catch(continued, errors=[EXECUTION_ALREADY_EXISTS], result_path=ERROR_PATH)
    catch_all(start, job_failed)
    ended = sfn.Succeed(scope, f"{prefix}Continued", comment="Handed off; not the job's end.")
    continued.next(ended)
    return prepare.next(start.next(continued))


def _next_input(multi_agent: bool) -> dict[str, Any]:
    """The next execution's input: the same job, session, version and counters (``continued``)."""
    carried: dict[str, Any] = {MULTI_AGENT_FLAG: True} if multi_agent else {}
    return {
        "session_id": path("$.session_id"),
        "agent_id": path("$.agent_id"),
        AGENT_FUNCTION_FIELD: path(f"$.{AGENT_FUNCTION_FIELD}"),
        "prompt.$": JSON_NULL,
        "continued": {
            "job_id": path("$.job_id"),
            "slice": number("$.slice"),
            "model_calls": number("$.model_calls"),
            "interrupt_responses": sfn.JsonPath.list_at("$.interrupt_responses"),
            "execution_index": number(f"{NEXT_EXECUTION}.index"),
            "previous_execution": sfn.JsonPath.execution_id,
            **carried,
        },
    }
