"""The synthesized state machine and the contract module agree on every name they share.

The machine matches error names in its Retry and Catch lists, sends an action to the agent
function and branches on the status it returns; the handler raises exception classes, reads
the action and returns the status. A name on one side only is a job that retries what it
should not, fails what it should retry, or takes a Choice's default branch. The actions
themselves and their request and result fields: ``test_step_registry.py``.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any, get_args

import pytest

import elsai.serverless.orchestration  # noqa: F401  (loads every exception a step can raise)
from elsai.local.definition import state_machine_definition
from elsai.serverless import contract
from elsai.serverless import errors as job_errors
from elsai.serverless.contract import steps as registry

AGENT_ARN = "arn:aws:lambda:eu-west-1:111122223333:function:agent"

# Error names AWS defines (Step Functions, Lambda and its runtime): no class of ours has them.
# Listed here, not imported from the contract, so that a typo there cannot hide.
AWS_DEFINED_ERRORS = {
    "States.ALL",
    "States.Timeout",
    "States.TaskFailed",
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.Unknown",
    "Lambda.TooManyRequestsException",
    "Sandbox.Timedout",
    "Runtime.ExitError",
    "StepFunctions.SfnException",
    "StepFunctions.ExecutionAlreadyExistsException",
}
# The steps that run agent code: an exception no retry can fix must never be retried there.
AGENT_STEPS = {a for a, s in registry.STEPS.items() if s.kind in ("slice", "schedule")}


@pytest.fixture(scope="module")
def states(template_dict: dict[str, Any]) -> dict[str, Any]:
    """Every state by name, the Map's node branch included."""
    asl = state_machine_definition(template_dict, {"AgentFunction": AGENT_ARN})
    return dict(_all_states(asl["States"]))


def _all_states(states: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    for name, state in states.items():
        yield name, state
        processor = state.get("ItemProcessor") or state.get("Iterator")
        if processor:
            yield from _all_states(processor["States"])


def _exception_names() -> set[str]:
    """The names of every exception class elsai defines (what the Lambda runtime reports)."""
    seen: set[str] = set()
    todo: list[type[BaseException]] = [BaseException]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.split(".")[0] == "elsai":
            seen.add(cls.__name__)
    return seen


def _agent_tasks(states: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """The states that invoke the agent function: name -> (action, state)."""
    return {
        name: (state["Parameters"]["Payload"]["action"], state)
        for name, state in states.items()
        if state["Type"] == "Task"
        and state["Parameters"].get("FunctionName.$") == contract.AGENT_FUNCTION_PATH
    }


def _compared_statuses(rule: dict[str, Any]) -> Iterator[str]:
    if str(rule.get("Variable", "")).endswith(".status") and "StringEquals" in rule:
        yield rule["StringEquals"]
    nested = [*rule.get("And", ()), *rule.get("Or", ()), *([rule["Not"]] if "Not" in rule else [])]
    for inner in nested:
        yield from _compared_statuses(inner)


def test_every_error_name_the_machine_matches_is_aws_defined_or_an_exception_class(
    states: dict[str, Any],
) -> None:
    known = AWS_DEFINED_ERRORS | _exception_names()
    matched = {
        (name, error)
        for name, state in states.items()
        for entry in (*state.get("Retry", ()), *state.get("Catch", ()))
        for error in entry["ErrorEquals"]
    }
    unknown = sorted((name, error) for name, error in matched if error not in known)
    assert not unknown, f"Retry/Catch names no exception class and no AWS error: {unknown}"


def test_every_agent_step_never_retries_the_non_retryable_exceptions(
    states: dict[str, Any],
) -> None:
    never = {cls.__name__ for cls in contract.NON_RETRYABLE_EXCEPTIONS}
    retried = {cls.__name__ for cls in contract.RETRYABLE_EXCEPTIONS}
    steps = {n: s for n, (action, s) in _agent_tasks(states).items() if action in AGENT_STEPS}
    assert {registry.RUN_SLICE, registry.PLAN, registry.NODE_SLICE, registry.FOLD} <= AGENT_STEPS
    assert {"RunSlice", "Plan", "Fold", "NodeSlice"} <= set(steps)
    for name, state in steps.items():
        first, *rest = state["Retry"]
        assert first["MaxAttempts"] == 0, name
        assert never <= set(first["ErrorEquals"]), (
            f"{name} would retry {never - set(first['ErrorEquals'])}"
        )
        later = {
            e for entry in rest if entry.get("MaxAttempts", 3) > 0 for e in entry["ErrorEquals"]
        }
        assert retried <= later, f"{name} does not retry {retried - later}"


def test_every_job_error_class_is_a_non_retryable_error() -> None:
    # elsai.serverless.errors holds the job errors that no retry can fix (its docstring):
    # a new class there that the machine does not know would be retried as States.TaskFailed.
    defined = {
        cls
        for _, cls in inspect.getmembers(job_errors, inspect.isclass)
        if issubclass(cls, BaseException) and cls.__module__ == job_errors.__name__
    }
    assert defined <= set(contract.NON_RETRYABLE_EXCEPTIONS)
    assert (
        tuple(c.__name__ for c in contract.NON_RETRYABLE_EXCEPTIONS)
        == contract.NON_RETRYABLE_ERRORS
    )


def test_every_status_a_choice_branches_on_is_in_its_steps_result_literal(
    states: dict[str, Any],
) -> None:
    routes = 0
    for action, task in _agent_tasks(states).values():
        choice = states.get(task.get("Next", ""))
        if choice is None or choice["Type"] != "Choice" or registry.step(action).kind == "park":
            continue  # the park's answer is the API's, not a result status (UpgradeOnResume)
        result = registry.step(action).result_model()
        allowed = set(get_args(result.model_fields["status"].annotation))
        compared = {s for rule in choice["Choices"] for s in _compared_statuses(rule)}
        assert compared, task["Next"]
        assert compared <= allowed, f"{task['Next']} compares {compared - allowed}"
        routes += 1
    assert routes == 4  # RouteOnStatus, PlanRoute, FoldRoute, NodeRoute


def test_every_status_a_pass_state_writes_is_a_contract_status(states: dict[str, Any]) -> None:
    written = {
        state["Parameters"]["status"]
        for state in states.values()
        if state["Type"] == "Pass" and "status" in (state.get("Parameters") or {})
    }
    assert written == {contract.FAILED, contract.CONTINUED}
    assert written <= contract.STATUSES


def test_the_named_constants_are_members_of_their_literals() -> None:
    slice_status = set(get_args(contract.SliceStatus))
    run_status = set(get_args(contract.RunStatus))
    node_status = set(get_args(contract.NodeSliceStatus))
    assert {
        contract.COMPLETED,
        contract.CONTINUE,
        contract.INTERRUPTED,
        contract.ORCHESTRATE,
    } == slice_status
    assert {contract.RUN, contract.COMPLETED, contract.FAILED, contract.INTERRUPTED} == run_status
    assert {
        contract.COMPLETED,
        contract.CONTINUE,
        contract.INTERRUPTED,
        contract.FAILED,
    } == node_status
    assert set(contract.RETRYABLE_ERRORS) - AWS_DEFINED_ERRORS <= _exception_names()
