"""The synthesized state machine and the step registry agree, both ways.

Every task of the agent function sends an action the registry serves, with the fields of that
step's request model (none it lacks, every one it requires), waits for a task token exactly
when the step parks, and the machine reads only fields of the step's result model; every
registered step is sent by some task. The checks are run on edited copies too: a step added
to, removed from or changed in the registry alone, or a task edited alone, is reported.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import pytest
from pydantic import BaseModel

from elsai.local.definition import state_machine_definition
from elsai.serverless import contract
from elsai.serverless.contract import JobStepRequest
from elsai.serverless.contract.steps import (
    FOLD,
    NODE_SLICE,
    PARK,
    PARK_NODES,
    PLAN,
    RUN_SLICE,
    STEPS,
    Step,
)

AGENT_ARN = "arn:aws:lambda:eu-west-1:111122223333:function:agent"
_READ = re.compile(r"\$\.(\w+)\.Payload\.(\w+)")


@pytest.fixture(scope="module")
def machine(template_dict: dict[str, Any]) -> dict[str, Any]:
    """The synthesized machine as plain ASL."""
    return state_machine_definition(template_dict, {"AgentFunction": AGENT_ARN})


def scopes(states: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The machine's top-level states, then each Map's branch states (a scope of their own)."""
    yield states
    for state in states.values():
        processor = state.get("ItemProcessor") or state.get("Iterator")
        if processor:
            yield from scopes(processor["States"])


def agent_tasks(states: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The states of one scope that invoke the agent function."""
    return {
        name: state
        for name, state in states.items()
        if state["Type"] == "Task"
        and state["Parameters"].get("FunctionName.$") == contract.AGENT_FUNCTION_PATH
    }


def _strings(value: Any) -> Iterator[str]:
    """Every string in a state (keys too), a Map's branch left out (its own scope)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, inner in value.items():
            if key not in ("ItemProcessor", "Iterator"):
                yield key
                yield from _strings(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _strings(inner)


def task_problems(name: str, task: dict[str, Any], entry: Step) -> list[str]:
    """How one task disagrees with its step's entry: request fields, token wait."""
    problems = []
    fields = entry.request_model().model_fields
    sent = {key.removesuffix(".$") for key in task["Parameters"]["Payload"]} - {"action"}
    required = {field for field, info in fields.items() if info.is_required()}
    if sent - set(fields):
        problems.append(f"{name} sends {sorted(sent - set(fields))}, not in {entry.request}")
    if required - sent:
        problems.append(f"{name} lacks {sorted(required - sent)}, required by {entry.request}")
    waits = task["Resource"].endswith(".waitForTaskToken")
    if waits != (entry.kind == "park"):
        problems.append(f"{name} waits for a token: {waits}, but {entry.action} is a {entry.kind}")
    return problems


def read_problems(states: dict[str, Any], written: dict[str, list[Step]]) -> list[str]:
    """Fields the scope reads from a step's result (``$.<path>.Payload.<field>``) it lacks."""
    problems = []
    for name, state in states.items():
        for text in _strings(state):
            for path, field in _READ.findall(text):
                for entry in written.get(path, []):
                    if field not in entry.result_model().model_fields:
                        problems.append(f"{name} reads {field!r}, not in {entry.result}")
    return problems


def disagreements(asl: dict[str, Any], registry: Mapping[str, Step]) -> list[str]:
    """Everything the machine and the registry disagree on (an empty list: they agree)."""
    problems: list[str] = []
    used: set[str] = set()
    for states in scopes(asl["States"]):
        written: dict[str, list[Step]] = {}
        for name, task in agent_tasks(states).items():
            action = task["Parameters"]["Payload"].get("action")
            entry = registry.get(action)
            if entry is None:
                problems.append(f"{name} sends the action {action!r}, which no step serves")
                continue
            used.add(action)
            problems += task_problems(name, task, entry)
            if entry.kind != "park":  # a park's answer is the API's, not the step's result
                written.setdefault(task["ResultPath"].removeprefix("$."), []).append(entry)
        problems += read_problems(states, written)
    problems += [f"no task sends {action!r}" for action in registry if action not in used]
    return problems


def test_the_machine_and_the_registry_agree(machine: dict[str, Any]) -> None:
    assert disagreements(machine, STEPS) == []
    sent = {
        task["Parameters"]["Payload"]["action"]
        for states in scopes(machine["States"])
        for task in agent_tasks(states).values()
    }
    assert {RUN_SLICE, PARK, PLAN, NODE_SLICE, FOLD, PARK_NODES} <= sent == set(STEPS)


# -- one side edited alone --------------------------------------------------------------------


class StricterPlanRequest(JobStepRequest):
    """Plan's request with a field no task sends."""

    horizon: int


class NarrowerPlanResult(BaseModel):
    """A Plan result without the fields the machine reads."""

    status: str


_HERE = "tests.unit.cdk.test_step_registry"


def _registry(**changes: Step | None) -> dict[str, Step]:
    edited: dict[str, Step | None] = {**STEPS, **changes}
    return {action: entry for action, entry in edited.items() if entry is not None}


@pytest.mark.parametrize(
    ("registry", "expected"),
    [
        (
            _registry(
                unsent=Step("unsent", STEPS[PLAN].request, STEPS[PLAN].result, "m:f", "schedule")
            ),
            "no task sends 'unsent'",
        ),
        (_registry(fold=None), "Fold sends the action 'fold', which no step serves"),
        (
            _registry(plan=replace(STEPS[PLAN], request=f"{_HERE}:StricterPlanRequest")),
            "Plan lacks ['horizon']",
        ),
        (
            _registry(plan=replace(STEPS[PLAN], request=f"{contract.__name__}:ParkRequest")),
            "Plan lacks ['task_token']",
        ),
        (
            _registry(plan=replace(STEPS[PLAN], result=f"{_HERE}:NarrowerPlanResult")),
            "Nodes reads 'nodes'",
        ),
        (_registry(park=replace(STEPS[PARK], kind="slice")), "WaitForResponses waits for a token"),
    ],
    ids=[
        "entry-added",
        "entry-removed",
        "request-field-added",
        "request-model-swapped",
        "result-field-removed",
        "kind-changed",
    ],  # fmt: skip
)
def test_a_registry_edited_alone_disagrees(
    machine: dict[str, Any], registry: dict[str, Step], expected: str
) -> None:
    found = disagreements(machine, registry)
    assert any(p.startswith(expected) for p in found), found


def _task(asl: dict[str, Any], name: str) -> dict[str, Any]:
    for states in scopes(asl["States"]):
        if name in states:
            return dict(states[name])
    raise KeyError(name)


def _edited(machine: dict[str, Any], name: str, edit: Any) -> dict[str, Any]:
    asl = copy.deepcopy(machine)
    for states in scopes(asl["States"]):
        if name in states:
            edit(states[name])
    return asl


def _rename(payload_key: str, new_key: str) -> Any:
    def edit(state: dict[str, Any]) -> None:
        payload = state["Parameters"]["Payload"]
        payload[new_key] = payload.pop(payload_key)

    return edit


@pytest.mark.parametrize(
    ("task", "edit", "expected"),
    [
        ("Plan", lambda s: s["Parameters"]["Payload"].update(action="replan"), "Plan sends the action 'replan'"),
        ("Plan", lambda s: s["Parameters"]["Payload"].update(action="replan"), "no task sends 'plan'"),
        ("RunSlice", _rename("slice.$", "slices.$"), "RunSlice sends ['slices']"),
        ("NodeSlice", _rename("node.$", "name.$"), "NodeSlice lacks ['node']"),
        ("WaitForResponses", lambda s: s.update(Resource=s["Resource"].removesuffix(".waitForTaskToken")),
         "WaitForResponses waits for a token: False"),
        ("RouteOnStatus", lambda s: s["Choices"][0].update(Variable="$.last.Payload.state"),
         "RouteOnStatus reads 'state'"),
    ],
    ids=["action-renamed", "action-unused", "field-renamed", "required-field-dropped",
         "token-wait-dropped", "result-read-renamed"],
)  # fmt: skip
def test_a_machine_edited_alone_disagrees(
    machine: dict[str, Any], task: str, edit: Any, expected: str
) -> None:
    assert _task(machine, task)  # the state exists to be edited
    found = disagreements(_edited(machine, task, edit), STEPS)
    assert any(p.startswith(expected) for p in found), found
