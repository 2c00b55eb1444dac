"""Each registry entry resolves to its models and a function serving exactly that step.

The entries name their models and function as strings (imported on first use); a typo, a
moved function or a function written for another step's models is found here, not by the
first job that takes the step. The machine side: tests/unit/cdk/test_step_registry.py.
"""

from __future__ import annotations

import inspect

import pytest
from pydantic import BaseModel

from elsai.serverless.contract import steps
from elsai.serverless.contract.steps import STEPS, Step, UnknownActionError, step


@pytest.mark.parametrize("action", sorted(STEPS))
def test_an_entry_resolves_to_its_models_and_a_function_typed_for_them(action: str) -> None:
    entry = step(action)
    request, result = entry.request_model(), entry.result_model()
    assert issubclass(request, BaseModel) and issubclass(result, BaseModel)
    assert "status" in result.model_fields or entry.kind == "park"  # what Choices branch on
    function = entry.serving_function()
    signature = inspect.signature(function)
    (first, second) = signature.parameters.values()
    # the annotations are strings (postponed evaluation): the names of the registered models
    assert first.annotation == request.__name__, (action, first.annotation)
    assert second.annotation == "StepContext"
    assert signature.return_annotation == result.__name__


def test_every_action_constant_names_an_entry() -> None:
    constants = {
        value
        for name, value in vars(steps).items()
        if name.isupper() and isinstance(value, str) and not name.startswith("_")
    }
    assert constants == set(STEPS) == set(steps.ACTIONS)
    assert all(entry.action == action for action, entry in STEPS.items())


@pytest.mark.parametrize("action", ["", "RUN_SLICE", "run_slice ", None, 3, ["run_slice"]])
def test_an_unknown_action_is_refused_naming_the_known_ones(action: object) -> None:
    with pytest.raises(UnknownActionError, match=r"no step serves .*\['fold', 'node_slice'"):
        step(action)


def test_a_broken_reference_fails_when_resolved() -> None:
    broken = Step("x", "elsai.serverless.contract:NoSuchModel", "m:n", "no_such_module:f", "slice")
    with pytest.raises(AttributeError, match="NoSuchModel"):
        broken.request_model()
    with pytest.raises(ModuleNotFoundError, match="no_such_module"):
        broken.serving_function()


def test_the_table_cannot_be_changed_in_place() -> None:
    with pytest.raises(TypeError):
        STEPS["noop"] = STEPS["plan"]  # type: ignore[index]
