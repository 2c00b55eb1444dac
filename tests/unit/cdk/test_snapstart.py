"""The snapStart knob: SnapStart on published versions, a "live" alias, the machine calls it.

Synthesized with cdk-nag active (a finding raises), and its state machine definition resolved
the way the local runtime resolves it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template

from elsai.cdk.config import ElsaiConfig
from elsai.local.definition import state_machine_definition

AGENT_ARN = "arn:aws:lambda:us-east-1:123456789012:function:elsai-agent"


@pytest.fixture(scope="module")
def snap_template(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from infra.app import build_app

    outdir = tmp_path_factory.mktemp("cdk.out.snap")
    app, stack = build_app({"snapStart": "true", "stackName": "ElsaiSnap"}, outdir=str(outdir))
    assembly = app.synth()  # cdk-nag runs here and raises on any finding
    return dict(assembly.get_stack_by_name(stack.stack_name).template)


def _agent_function(template: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return next(
        (k, r)
        for k, r in template["Resources"].items()
        if r["Type"] == "AWS::Lambda::Function"
        and r["Properties"].get("Handler") == "elsai_lambdas.agent_handler.handler"
    )


def test_snapstart_publishes_a_version_behind_a_live_alias(snap_template: dict[str, Any]) -> None:
    t = Template.from_json(snap_template)
    fn_id, fn = _agent_function(snap_template)
    assert fn["Properties"]["SnapStart"] == {"ApplyOn": "PublishedVersions"}
    assert fn["Properties"]["Runtime"] == "python3.12"  # SnapStart needs Python 3.12+
    t.resource_count_is("AWS::Lambda::Version", 1)
    t.has_resource_properties(
        "AWS::Lambda::Alias",
        {
            "Name": "live",
            "FunctionName": {"Ref": fn_id},
            "FunctionVersion": {"Fn::GetAtt": [Match.any_value(), "Version"]},
        },
    )
    # Only the agent function: the API and sweeper start rarely enough to stay on-demand.
    others = [
        r
        for r in snap_template["Resources"].values()
        if r["Type"] == "AWS::Lambda::Function" and "SnapStart" in r["Properties"]
    ]
    assert len(others) == 1


def test_the_state_machine_invokes_the_alias(snap_template: dict[str, Any]) -> None:
    (alias_id,) = [
        k for k, r in snap_template["Resources"].items() if r["Type"] == "AWS::Lambda::Alias"
    ]
    machine = next(
        r
        for r in snap_template["Resources"].values()
        if r["Type"] == "AWS::StepFunctions::StateMachine"
    )
    raw = json.dumps(machine["Properties"]["DefinitionString"])
    assert f'{{"Ref": "{alias_id}"}}' in raw
    definition = state_machine_definition(snap_template, {"AgentFunction": AGENT_ARN})
    tasks = [s for s in _states(definition) if s.get("Resource", "").endswith(":lambda:invoke")]
    targets = {s["Parameters"]["FunctionName"] for s in tasks}
    assert targets == {f"{AGENT_ARN}:live"}
    # The machine's role may invoke the alias (and the published versions behind it).
    policies = [
        r["Properties"]["PolicyDocument"]["Statement"]
        for r in snap_template["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy"
    ]
    invoke = [
        s for st in policies for s in st if "lambda:InvokeFunction" in json.dumps(s["Action"])
    ]
    assert any({"Ref": alias_id} in _list(s["Resource"]) for s in invoke), invoke


def test_snapstart_is_off_by_default(template_dict: dict[str, Any]) -> None:
    _, fn = _agent_function(template_dict)
    assert "SnapStart" not in fn["Properties"]
    kinds = {r["Type"] for r in template_dict["Resources"].values()}
    assert "AWS::Lambda::Alias" not in kinds and "AWS::Lambda::Version" not in kinds


@pytest.mark.parametrize("value", ["yes", "1", "on"])
def test_a_snapstart_value_that_is_not_a_boolean_is_refused(value: str, tmp_path: Path) -> None:
    import aws_cdk as cdk

    app = cdk.App(context={"snapStart": value}, outdir=str(tmp_path))
    with pytest.raises(ValueError, match="snapStart must be true or false"):
        ElsaiConfig.from_node(app.node)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _states(definition: dict[str, Any]) -> list[dict[str, Any]]:
    found = []
    for state in definition.get("States", {}).values():
        found.append(state)
        for branch in state.get("Branches", []):
            found += _states(branch)
        if "ItemProcessor" in state:
            found += _states(state["ItemProcessor"])
        if "Iterator" in state:
            found += _states(state["Iterator"])
    return found
