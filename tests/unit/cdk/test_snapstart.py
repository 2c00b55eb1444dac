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


def test_the_state_machine_invokes_the_published_version_the_alias_names(
    snap_template: dict[str, Any],
) -> None:
    (alias_id,) = [
        k for k, r in snap_template["Resources"].items() if r["Type"] == "AWS::Lambda::Alias"
    ]
    (version_id,) = [
        k for k, r in snap_template["Resources"].items() if r["Type"] == "AWS::Lambda::Version"
    ]
    alias = snap_template["Resources"][alias_id]["Properties"]
    assert alias["FunctionVersion"] == {"Fn::GetAtt": [version_id, "Version"]}
    machine = next(
        r
        for r in snap_template["Resources"].values()
        if r["Type"] == "AWS::StepFunctions::StateMachine"
    )
    # Jobs are pinned to a SnapStart-published version, never $LATEST (test_pinning.py).
    raw = json.dumps(machine["Properties"]["DefinitionString"])
    assert f'{{"Ref": "{version_id}"}}' in raw
    definition = state_machine_definition(snap_template, {"AgentFunction": AGENT_ARN}, version="4")
    tasks = [s for s in _states(definition) if s.get("Resource", "").endswith(":lambda:invoke")]
    assert {s["Parameters"]["FunctionName.$"] for s in tasks} == {"$.agent_function"}
    assert definition["States"]["PinCurrentVersion"]["Result"] == f"{AGENT_ARN}:4"
    # The machine's role may invoke the published versions (and the alias on them).
    policies = [
        r["Properties"]["PolicyDocument"]["Statement"]
        for r in snap_template["Resources"].values()
        if r["Type"] == "AWS::IAM::Policy"
    ]
    invoke = [
        s for st in policies for s in st if "lambda:InvokeFunction" in json.dumps(s["Action"])
    ]
    arns = [json.dumps(r) for s in invoke for r in _list(s["Resource"])]
    assert arns and all(":*" in a for a in arns), arns


def test_snapstart_is_off_by_default(template_dict: dict[str, Any]) -> None:
    _, fn = _agent_function(template_dict)
    assert "SnapStart" not in fn["Properties"]
    kinds = [r["Type"] for r in template_dict["Resources"].values()]
    # Without SnapStart there is no alias; the one published version is what jobs pin to.
    assert "AWS::Lambda::Alias" not in kinds and kinds.count("AWS::Lambda::Version") == 1


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
