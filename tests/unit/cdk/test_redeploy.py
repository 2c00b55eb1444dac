"""Destroy then deploy again: nothing the stack retains may carry a fixed physical name.

Retained resources outlive ``cdk destroy``; one with a fixed name (e.g. a log group called
``/aws/vendedlogs/states/ElsaiStack-jobs``) makes the next deploy fail with "already exists".
"""

from __future__ import annotations

from typing import Any

# Properties that fix a resource's physical name, per type that the stack retains.
NAME_PROPERTIES = {
    "AWS::Logs::LogGroup": "LogGroupName",
    "AWS::S3::Bucket": "BucketName",
    "AWS::IAM::Role": "RoleName",
    "AWS::Lambda::Function": "FunctionName",
    "AWS::StepFunctions::StateMachine": "StateMachineName",
}


def _retained(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        k: v
        for k, v in template["Resources"].items()
        if v.get("DeletionPolicy") == "Retain" or v.get("UpdateReplacePolicy") == "Retain"
    }


def test_retained_resources_are_named_by_cloudformation(template_dict: dict[str, Any]) -> None:
    retained = _retained(template_dict)
    types = {v["Type"] for v in retained.values()}
    # The state machine's log group is among them: retained, and without a fixed name.
    assert {"AWS::Logs::LogGroup", "AWS::S3::Bucket"} <= types
    for logical_id, resource in retained.items():
        name_prop = NAME_PROPERTIES.get(resource["Type"])
        assert name_prop is None or name_prop not in resource.get("Properties", {}), logical_id


def test_state_machine_log_group_is_retained_and_unnamed(template_dict: dict[str, Any]) -> None:
    machine = next(
        v for v in template_dict["Resources"].values()
        if v["Type"] == "AWS::StepFunctions::StateMachine"
    )  # fmt: skip
    (destination,) = machine["Properties"]["LoggingConfiguration"]["Destinations"]
    group_id = destination["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0]
    group = template_dict["Resources"][group_id]
    assert group["DeletionPolicy"] == "Retain"
    assert "LogGroupName" not in group["Properties"]


def test_the_named_resources_are_not_retained(template_dict: dict[str, Any]) -> None:
    # A fixed name is fine on what destroy deletes: the next deploy creates it afresh.
    named = [
        (k, v) for k, v in template_dict["Resources"].items()
        if NAME_PROPERTIES.get(v["Type"]) in v.get("Properties", {})
    ]  # fmt: skip
    assert [v["Type"] for _, v in named] == ["AWS::StepFunctions::StateMachine"]
    assert all(v.get("DeletionPolicy", "Delete") == "Delete" for _, v in named)
