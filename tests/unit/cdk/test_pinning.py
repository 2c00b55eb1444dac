"""Jobs pinned to a published version: the template's side (elsai/cdk/pinning.py).

The local runtime tests (tests/system/deploys) run the machine across deploys; these check
what the template promises: a retained published version per deploy, every agent task
invoking the state's ``$.agent_function`` (never the bare function), the version carried
through every state that rebuilds the state, and IAM for qualified ARNs only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from elsai.local.definition import state_machine_definition
from elsai.serverless.contract.steps import STEPS

AGENT_ARN = "arn:aws:lambda:us-east-1:123456789012:function:agent"


@pytest.fixture(scope="module")
def asl(template_dict: dict[str, Any]) -> dict[str, Any]:
    return state_machine_definition(template_dict, {"AgentFunction": AGENT_ARN}, version="7")


def _all_states(machine: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, state in machine["States"].items():
        yield name, state
        inner = state.get("ItemProcessor")
        if inner:
            yield from _all_states(inner)


def _version_id(template: dict[str, Any]) -> str:
    (version_id,) = [
        k for k, r in template["Resources"].items() if r["Type"] == "AWS::Lambda::Version"
    ]
    return version_id


def test_each_deploy_publishes_a_version_that_is_retained(template_dict: dict[str, Any]) -> None:
    version = template_dict["Resources"][_version_id(template_dict)]
    assert version["Properties"]["FunctionName"]["Ref"].startswith("AgentFunction")
    # An update replaces the version resource (its logical id hashes the code and config):
    # the old version must stay, for the jobs still pinned to it.
    assert version["DeletionPolicy"] == version["UpdateReplacePolicy"] == "Retain"


def test_every_agent_task_invokes_the_jobs_version(asl: dict[str, Any]) -> None:
    invokes = [
        (name, s) for name, s in _all_states(asl)
        if s["Type"] == "Task" and ":lambda:invoke" in s["Resource"]
    ]  # fmt: skip
    assert {n for n, _ in invokes} >= {
        "RunSlice", "WaitForResponses", "Plan", "Fold", "NodeSlice", "WaitForNodeResponses",
    }  # fmt: skip
    # every step's task, and nothing else, invokes the agent function
    assert {s["Parameters"]["Payload"]["action"] for _, s in invokes} == set(STEPS)
    for name, state in invokes:
        assert state["Parameters"]["FunctionName.$"] == "$.agent_function", name
        assert "FunctionName" not in state["Parameters"], name
    assert AGENT_ARN not in json.dumps(
        [s for _, s in invokes]
    )  # no task names a function of its own


def test_a_job_started_without_a_version_is_pinned_to_this_deploys(asl: dict[str, Any]) -> None:
    states = asl["States"]
    assert asl["StartAt"] == "PinVersion"
    (absent,) = states["PinVersion"]["Choices"]
    assert absent == {"Variable": "$.agent_function", "IsPresent": False,
                      "Next": "PinCurrentVersion"}  # fmt: skip
    assert states["PinVersion"]["Default"] == "StartOrContinue"
    pin = states["PinCurrentVersion"]
    assert pin["Result"] == f"{AGENT_ARN}:7" and pin["ResultPath"] == "$.agent_function"
    assert pin["Next"] == "StartOrContinue"


def test_every_state_that_rebuilds_the_state_keeps_the_version(asl: dict[str, Any]) -> None:
    rebuilt = {
        name: s.get("Parameters") or s.get("ItemSelector")
        for name, s in _all_states(asl)
        # the two HandedOff states shape an execution's output, not the next state
        if s["Type"] in ("Pass", "Map") and name not in ("HandedOff", "MultiAgentHandedOff")
        and "job_id.$" in (s.get("Parameters") or s.get("ItemSelector") or {})
    }  # fmt: skip
    assert {"Init", "Continue", "NextSlice", "ResumeSlice", "ResumeUpgraded", "Nodes",
            "NextBatch", "ResumeNodes", "StartMultiAgent", "NextNodeSlice"} <= set(rebuilt)  # fmt: skip
    for name, params in rebuilt.items():
        assert "agent_function.$" in params, name
    upgraded = ("ResumeUpgraded", "ResumeNodesUpgraded")
    for name in upgraded:
        assert rebuilt[name]["agent_function.$"] == "$.answer.agent_function", name
    carried = {k: v for k, v in rebuilt.items() if k not in upgraded}
    assert {p["agent_function.$"] for p in carried.values()} == {"$.agent_function"}
    # The continuation's next execution starts on the same version.
    states = dict(_all_states(asl))
    for name in ("HandOff", "MultiAgentHandOff"):
        assert states[name]["Parameters"]["Input"]["agent_function.$"] == "$.agent_function", name


def test_only_an_upgraded_answer_moves_a_job(asl: dict[str, Any]) -> None:
    choice = asl["States"]["UpgradeOnResume"]
    assert choice["Choices"] == [
        {"Variable": "$.answer.agent_function", "IsPresent": True, "Next": "ResumeUpgraded"}
    ]
    assert choice["Default"] == "ResumeSlice"
    assert asl["States"]["WaitForResponses"]["Next"] == "UpgradeOnResume"


def test_only_an_upgraded_answer_moves_a_multi_agent_job_and_it_plans_again(
    asl: dict[str, Any],
) -> None:
    states = dict(_all_states(asl))
    choice = states["UpgradeNodesOnResume"]
    assert choice["Choices"] == [
        {"Variable": "$.answer.agent_function", "IsPresent": True, "Next": "ResumeNodesUpgraded"}
    ]
    assert choice["Default"] == "ResumeNodes"
    assert states["WaitForNodeResponses"]["Next"] == "UpgradeNodesOnResume"
    # both go on through the batch budget check (a continuation, or Plan, which compares builds)
    assert (
        states["ResumeNodesUpgraded"]["Next"] == states["ResumeNodes"]["Next"] == "CheckBatchBudget"
    )


def test_the_machine_may_invoke_qualified_arns_only(template_dict: dict[str, Any]) -> None:
    policies = [
        r["Properties"]["PolicyDocument"]["Statement"]
        for k, r in template_dict["Resources"].items()
        if r["Type"] == "AWS::IAM::Policy" and k.startswith("JobsStateMachineRole")
    ]
    invoke = [s for st in policies for s in st if "lambda:" in json.dumps(s["Action"])]
    (statement,) = invoke
    assert statement["Action"] == "lambda:InvokeFunction"
    resource = statement["Resource"]  # one ARN pattern: <function ARN>:* (versions), no bare one
    assert resource["Fn::Join"][1][-1] == ":*"
    assert resource["Fn::Join"][1][0]["Fn::GetAtt"][0].startswith("AgentFunction")


def test_the_api_starts_jobs_on_this_deploys_version(template_dict: dict[str, Any]) -> None:
    (api,) = [
        r for k, r in template_dict["Resources"].items()
        if r["Type"] == "AWS::Lambda::Function" and k.startswith("ApiFunction")
    ]  # fmt: skip
    env = api["Properties"]["Environment"]["Variables"]
    assert env["ELSAI_AGENT_VERSION_ARN"] == {"Ref": _version_id(template_dict)}
