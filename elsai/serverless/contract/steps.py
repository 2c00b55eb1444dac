"""The state machine's steps: one entry per action the agent function serves.

Each entry names the action a task sends (``"action"`` in its payload), the model the handler
validates the event with, the model of the result the machine reads, and the function that
serves it. Models and functions are named as ``"module:name"`` and imported on first use: a
single-agent slice's cold start imports nothing of a Graph's or Swarm's steps (their models
are in `elsai.serverless.contract.node_steps`, their functions in
`elsai.serverless.orchestration_steps`).

The agent handler (``elsai_lambdas.agent_handler``) looks the action up here and calls the
function with the validated request and a `StepContext`; the CDK constructs build each task
with `elsai.cdk.tasks.invoke_agent` (a ``park`` step's task waits for a task token); the
local runtime reads an invocation's `Step` to tell slices, scheduling and parks apart.
``tests/unit/cdk/test_step_registry.py`` checks the synthesized machine against this table
both ways. How to add a step: ``elsai/serverless/contract/README.md``.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Literal

from elsai.errors import ElsaiError

if TYPE_CHECKING:
    from pydantic import BaseModel

#: One slice of a single-agent job (also the default of an event without ``action``).
RUN_SLICE: Final = "run_slice"
#: Park the task token of a job waiting for interrupt responses.
PARK: Final = "park"
#: Start or continue a Graph/Swarm run; name the ready nodes.
PLAN: Final = "plan"
#: One slice of one node of a Graph/Swarm run (a Map branch).
NODE_SLICE: Final = "node_slice"
#: Record a batch's node reports; name the next batch or the end.
FOLD: Final = "fold"
#: Park a Graph/Swarm job whose only nodes left wait for people (one token, every node's wait).
PARK_NODES: Final = "park_nodes"

#: What a step does, which decides how the machine calls it and how it is retried:
#: "slice" runs an agent's model and tools until a boundary; "schedule" rebuilds a Graph or
#: Swarm to plan its next work (no tools run); "park" stores a task token and the machine's
#: task waits for the API to send it back. Slices and schedules are retried like agent code
#: (the non-retryable errors first); a park only on Lambda's own failures.
StepKind = Literal["slice", "schedule", "park"]


#: The function serving a step: its validated request and the context in, its result out.
StepFunction = Callable[[Any, Any], "BaseModel"]
"""Its second argument is the handler's `elsai.serverless.step_context.StepContext`."""


class UnknownActionError(ElsaiError, ValueError):
    """An event names an action no step serves (nothing is run for it)."""


@functools.cache
def _resolve(reference: str) -> Any:
    """The object a ``"module:name"`` reference names, imported on first use."""
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class Step:
    """One action: its request and result models, its function, and what kind of step it is."""

    action: str
    #: ``"module:Model"`` of the request the event is validated with.
    request: str
    #: ``"module:Model"`` of the result the machine reads from ``Payload``.
    result: str
    #: ``"module:function"`` serving it (a `StepFunction`).
    function: str
    kind: StepKind

    def request_model(self) -> type[BaseModel]:
        """The request model (imported on first use)."""
        model: type[BaseModel] = _resolve(self.request)
        return model

    def result_model(self) -> type[BaseModel]:
        """The result model (imported on first use)."""
        model: type[BaseModel] = _resolve(self.result)
        return model

    def serving_function(self) -> StepFunction:
        """The function serving the step (imported on first use)."""
        function: StepFunction = _resolve(self.function)
        return function


_CONTRACT = "elsai.serverless.contract"
_NODE_STEPS = "elsai.serverless.contract.node_steps"
_ORCHESTRATION = "elsai.serverless.orchestration_steps"


def _table(*steps: Step) -> Mapping[str, Step]:
    table = {step.action: step for step in steps}
    if len(table) != len(steps):
        raise ValueError("two steps share an action")
    return MappingProxyType(table)


#: Every step, by action.
STEPS: Final[Mapping[str, Step]] = _table(
    Step(
        RUN_SLICE,
        request=f"{_CONTRACT}:SliceRequest",
        result=f"{_CONTRACT}:SliceResult",
        function="elsai.serverless.slice:serve_slice",
        kind="slice",
    ),
    Step(
        PARK,
        request=f"{_CONTRACT}:ParkRequest",
        result=f"{_CONTRACT}:ParkResult",
        function="elsai.serverless.parked:serve_park",
        kind="park",
    ),
    Step(
        PLAN,
        request=f"{_CONTRACT}:JobStepRequest",
        result=f"{_NODE_STEPS}:PlanResult",
        function=f"{_ORCHESTRATION}:serve_plan",
        kind="schedule",
    ),
    Step(
        NODE_SLICE,
        request=f"{_NODE_STEPS}:NodeSliceRequest",
        result=f"{_NODE_STEPS}:NodeSliceResult",
        function=f"{_ORCHESTRATION}:serve_node_slice",
        kind="slice",
    ),
    Step(
        FOLD,
        request=f"{_NODE_STEPS}:FoldRequest",
        result=f"{_NODE_STEPS}:PlanResult",
        function=f"{_ORCHESTRATION}:serve_fold",
        kind="schedule",
    ),
    Step(
        PARK_NODES,
        request=f"{_CONTRACT}:ParkRequest",
        result=f"{_CONTRACT}:ParkResult",
        function="elsai.serverless.node_waits:serve_park_nodes",
        kind="park",
    ),
)
#: Every action a task may send.
ACTIONS: Final[tuple[str, ...]] = tuple(STEPS)


def step(action: object) -> Step:
    """The step serving `action`; UnknownActionError names the actions there are."""
    found = STEPS.get(action) if isinstance(action, str) else None
    if found is None:
        raise UnknownActionError(
            f"no step serves the action {str(action)[:60]!r}; the actions are {sorted(STEPS)}"
        )
    return found
