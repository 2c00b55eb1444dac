"""The Graph/Swarm path of the job machine: Plan → Map(node slice loops) → Fold, read from the template."""

from __future__ import annotations

from typing import Any

import pytest

from elsai.cdk.config import ElsaiConfig
from elsai.local.definition import state_machine_definition

AGENT_ARN = "arn:aws:lambda:eu-west-1:111122223333:function:agent"


@pytest.fixture(scope="module")
def states(template_dict: dict[str, Any]) -> dict[str, Any]:
    return dict(state_machine_definition(template_dict, {"AgentFunction": AGENT_ARN})["States"])


def _choices(state: dict[str, Any]) -> dict[str, str]:
    return {c["StringEquals"]: c["Next"] for c in state["Choices"]}


def test_plan_map_fold_loop(states: dict[str, Any]) -> None:
    assert states["StartMultiAgent"]["Next"] == "Plan"
    assert states["Plan"]["Parameters"]["Payload"]["action"] == "plan"
    # only waits left: the job parks one token beside its nodes' waits
    assert _choices(states["PlanRoute"]) == {
        "run": "Nodes",
        "completed": "MultiAgentResult",
        "interrupted": "WaitForNodeResponses",
    }
    assert states["PlanRoute"]["Default"] == "MultiAgentFailed"
    assert states["Nodes"]["Next"] == "Fold"
    assert states["Fold"]["Parameters"]["Payload"]["results.$"] == "$.batch"
    assert _choices(states["FoldRoute"]) == {
        "run": "NextBatch",
        "completed": "MultiAgentResult",
        "interrupted": "NextBatch",  # the next Plan runs every node that does not wait
    }
    assert states["MultiAgentResult"]["OutputPath"] == "$.plan.Payload"
    assert states["MultiAgentResult"]["Next"] == "MultiAgentCompleted"
    assert states["NextBatch"]["Next"] == states["ResumeNodes"]["Next"] == "CheckBatchBudget"
    # between batches the job continues in a new execution once this one used its budget
    check = states["CheckBatchBudget"]
    assert check["Default"] == "Plan"
    assert check["Choices"] == [{"Variable": "$.execution_slices",
                                 "NumericGreaterThanEquals": ElsaiConfig().execution_slices,
                                 "Next": "MultiAgentPrepareHandOff"}]  # fmt: skip
    assert states["MultiAgentHandOff"]["Parameters"]["Input"]["continued"]["multi_agent"] is True
    assert states["StartOrContinue"]["Choices"][0] == {
        "Variable": "$.continued.multi_agent", "IsPresent": True, "Next": "ContinueMultiAgent"
    }  # fmt: skip
    assert states["ContinueMultiAgent"]["Next"] == "Plan"
    park = states["WaitForNodeResponses"]
    assert park["Resource"].endswith(".waitForTaskToken")
    assert park["Parameters"]["Payload"]["action"] == "park_nodes"
    # answers stored before the park: plan again instead of sleeping on them
    assert park["Catch"] == [
        {"ErrorEquals": ["AnswersWaitingError"], "ResultPath": "$.answer", "Next": "ResumeNodes"},
        {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "MultiAgentStepFailed"},
    ]
    failed = states["MultiAgentFailed"]
    # MultiAgentFailed, or the budget a node crossed (SliceBudgetExhausted, ...)
    assert failed["ErrorPath"] == "$.plan.Payload.error_type"
    assert failed["CausePath"] == "$.plan.Payload.error"


def test_the_map_runs_each_ready_node_in_its_own_slice_loop(states: dict[str, Any]) -> None:
    nodes = states["Nodes"]
    assert nodes["Type"] == "Map" and nodes["ItemsPath"] == "$.plan.Payload.nodes"
    assert nodes["MaxConcurrency"] == ElsaiConfig().max_parallel_nodes
    assert nodes["ItemSelector"]["node.$"] == "$$.Map.Item.Value.node"
    # each node gets its own answers, never its siblings'
    assert nodes["ItemSelector"]["interrupt_responses.$"] == (
        "$$.Map.Item.Value.interrupt_responses"
    )
    branch = nodes["ItemProcessor"]["States"]
    assert set(branch) == {"NodeSlice", "NodeRoute", "NextNodeSlice", "NodeReport", "NodeErrored",
                           "NodeSliceBudgetExhausted"}  # fmt: skip
    node_slice = branch["NodeSlice"]
    assert node_slice["Parameters"]["Payload"]["action"] == "node_slice"
    # the same retry policy as RunSlice: unfixable errors first (unretried), throttling, then crashes
    assert node_slice["Retry"] == states["RunSlice"]["Retry"]
    assert node_slice["Catch"] == [
        {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "NodeErrored"}
    ]
    budget, more = branch["NodeRoute"]["Choices"]
    assert budget["Next"] == "NodeSliceBudgetExhausted"
    assert budget["And"][1] == {
        "Variable": "$.slice",
        "NumericGreaterThanEquals": ElsaiConfig().max_slices - 1,
    }
    assert more == {
        "Variable": "$.last.Payload.status",
        "StringEquals": "continue",
        "Next": "NextNodeSlice",
    }
    assert branch["NodeRoute"]["Default"] == "NodeReport"
    assert branch["NextNodeSlice"]["Next"] == "NodeSlice"
    assert branch["NextNodeSlice"]["Parameters"]["slice.$"] == "States.MathAdd($.slice, 1)"
    assert branch["NodeReport"]["OutputPath"] == "$.last.Payload"
    assert branch["NodeErrored"]["Parameters"]["status"] == "failed"


def test_max_parallel_nodes_is_a_knob(custom_template_dict: dict[str, Any]) -> None:
    custom = state_machine_definition(custom_template_dict, {"AgentFunction": AGENT_ARN})
    assert custom["States"]["Nodes"]["MaxConcurrency"] == 2
    branch = custom["States"]["Nodes"]["ItemProcessor"]["States"]
    assert "budget of 3 slices" in branch["NodeSliceBudgetExhausted"]["Parameters"]["error"]
    with pytest.raises(ValueError, match="maxParallelNodes must be 1..40"):
        ElsaiConfig(max_parallel_nodes=0)
