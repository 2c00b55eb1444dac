"""Lambda configuration and least-privilege IAM for the agent and API functions."""

from __future__ import annotations

import json
from typing import Any

import pytest


def _resources(template_dict: dict[str, Any], rtype: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in template_dict["Resources"].items() if v["Type"] == rtype}


def _function(template_dict: dict[str, Any], prefix: str) -> dict[str, Any]:
    (props,) = [
        v["Properties"]
        for k, v in _resources(template_dict, "AWS::Lambda::Function").items()
        if k.startswith(prefix)
    ]
    return props


def _statements(template_dict: dict[str, Any], role_prefix: str) -> list[dict[str, Any]]:
    """All statements attached to the role whose logical id starts with ``role_prefix``."""
    out: list[dict[str, Any]] = []
    for policy in _resources(template_dict, "AWS::IAM::Policy").values():
        roles = [r["Ref"] for r in policy["Properties"]["Roles"]]
        if any(r.startswith(role_prefix) for r in roles):
            out += policy["Properties"]["PolicyDocument"]["Statement"]
    return out


def _actions(stmt: dict[str, Any]) -> list[str]:
    a = stmt["Action"]
    return [a] if isinstance(a, str) else list(a)


def _resources_of(stmt: dict[str, Any]) -> list[Any]:
    r = stmt["Resource"]
    return r if isinstance(r, list) else [r]


def _for_service(stmts: list[dict[str, Any]], service: str) -> list[dict[str, Any]]:
    return [s for s in stmts if any(a.startswith(f"{service}:") for a in _actions(s))]


def test_agent_function_configuration(template_dict: dict[str, Any]) -> None:
    fn = _function(template_dict, "AgentFunction")
    assert fn["Runtime"] == "python3.12"
    assert fn["Handler"] == "elsai_lambdas.agent_handler.handler"
    assert fn["MemorySize"] == 1024
    assert fn["Timeout"] == 900
    assert fn["Architectures"] == ["x86_64"]
    assert fn["TracingConfig"] == {"Mode": "Active"}
    assert "ReservedConcurrentExecutions" not in fn
    env = fn["Environment"]["Variables"]
    assert env["ELSAI_SESSIONS_BUCKET"]["Ref"].startswith("SessionsBucket")
    assert env["ELSAI_AGENT_FACTORY"] == "example_agent:build_agent"
    assert env["ELSAI_MODEL_ID"] == "us.anthropic.claude-sonnet-4-6"
    assert env["ELSAI_MODEL"] == "bedrock"
    assert env["POWERTOOLS_SERVICE_NAME"] == "elsai"
    assert env["POWERTOOLS_METRICS_NAMESPACE"] == "elsai"
    assert env["LOG_LEVEL"] == "INFO"
    assert fn["LoggingConfig"]["LogGroup"]["Ref"].startswith("AgentFunctionLogs")


def test_api_function_configuration(template_dict: dict[str, Any]) -> None:
    fn = _function(template_dict, "ApiFunction")
    assert (fn["Runtime"], fn["Handler"]) == ("python3.12", "elsai_lambdas.api_handler.handler")
    env = fn["Environment"]["Variables"]
    assert env["ELSAI_STATE_MACHINE_ARN"]["Ref"].startswith("JobsStateMachine")
    assert env["ELSAI_SESSIONS_BUCKET"]["Ref"].startswith("SessionsBucket")


def test_both_functions_share_one_asset(template_dict: dict[str, Any]) -> None:
    keys = {json.dumps(fn["Properties"]["Code"], sort_keys=True)
            for fn in _resources(template_dict, "AWS::Lambda::Function").values()}  # fmt: skip
    assert len(keys) == 1


def test_context_overrides_reach_the_function(custom_template_dict: dict[str, Any]) -> None:
    fn = _function(custom_template_dict, "AgentFunction")
    assert fn["Timeout"] == 300
    assert fn["Environment"]["Variables"]["ELSAI_MODEL_ID"] == "amazon.nova-pro-v1:0"
    assert fn["ReservedConcurrentExecutions"] == 5  # maxConcurrentSlices


def test_no_aws_managed_policies_on_function_roles(template_dict: dict[str, Any]) -> None:
    for name, role in _resources(template_dict, "AWS::IAM::Role").items():
        if name.startswith(("AgentFunctionRole", "ApiFunctionRole")):
            assert "ManagedPolicyArns" not in role["Properties"], name


@pytest.mark.parametrize(
    ("layout", "role"),
    [("template_dict", "ApiFunctionRole"), ("template_dict", "TenantRole"),
     ("shared_template_dict", "AgentFunctionRole"), ("shared_template_dict", "ApiFunctionRole")],
)  # fmt: skip
def test_s3_access_is_scoped_to_the_sessions_bucket(
    request: pytest.FixtureRequest, layout: str, role: str
) -> None:
    s3 = _for_service(_statements(request.getfixturevalue(layout), role), "s3")
    assert s3
    for stmt in s3:
        for res in _resources_of(stmt):
            assert res != "*"
            rendered = json.dumps(res)
            assert '"SessionsBucket' in rendered and "AccessLogs" not in rendered, rendered


def test_agent_can_write_but_api_only_reads(shared_template_dict: dict[str, Any]) -> None:
    """The single-caller layout (isolated: tests/unit/cdk/test_tenancy.py)."""
    agent = {
        a
        for s in _for_service(_statements(shared_template_dict, "AgentFunctionRole"), "s3")
        for a in _actions(s)
    }
    api = {
        a
        for s in _for_service(_statements(shared_template_dict, "ApiFunctionRole"), "s3")
        # the one write of the API, the cancel record: see test_api_may_write_only_cancel_records
        if "cancelled.json" not in json.dumps(s["Resource"])
        for a in _actions(s)
    }
    assert {"s3:PutObject", "s3:GetObject*"} <= agent
    assert not any(a.startswith("s3:Delete") for a in agent)  # nothing in a slice deletes
    assert "s3:PutObjectAcl" not in agent
    assert not any(a.startswith(("s3:Put", "s3:Delete", "s3:Abort")) for a in api)


def test_bedrock_is_scoped_to_the_configured_model(template_dict: dict[str, Any]) -> None:
    (stmt,) = _for_service(_statements(template_dict, "AgentFunctionRole"), "bedrock")
    assert sorted(_actions(stmt)) == [
        "bedrock:InvokeModel",
        "bedrock:InvokeModelWithResponseStream",
    ]
    rendered = sorted(json.dumps(r) for r in _resources_of(stmt))
    assert len(rendered) == 2
    assert any(":inference-profile/us.anthropic.claude-sonnet-4-6" in r for r in rendered)
    assert any(":bedrock:*::foundation-model/anthropic.claude-sonnet-4-6" in r for r in rendered)
    assert "*" not in _resources_of(stmt)
    # nobody else may call Bedrock
    assert not _for_service(_statements(template_dict, "ApiFunctionRole"), "bedrock")
    assert not _for_service(_statements(template_dict, "JobsStateMachineRole"), "bedrock")


def test_plain_model_id_gets_a_single_regional_model_arn(
    custom_template_dict: dict[str, Any],
) -> None:
    (stmt,) = _for_service(_statements(custom_template_dict, "AgentFunctionRole"), "bedrock")
    (res,) = _resources_of(stmt)
    parts = res["Fn::Join"][1]
    assert {"Ref": "AWS::Region"} in parts
    assert parts[-1] == "::foundation-model/amazon.nova-pro-v1:0"


def test_api_may_only_start_describe_and_answer_this_machine(template_dict: dict[str, Any]) -> None:
    states = _for_service(_statements(template_dict, "ApiFunctionRole"), "states")
    by_action = {a: _resources_of(s) for s in states for a in _actions(s)}
    assert set(by_action) == {
        "states:StartExecution",
        "states:ListExecutions",  # GET /jobs
        "states:DescribeExecution",
        "states:GetExecutionHistory",
        "states:StopExecution",  # DELETE /jobs/{id}
        "states:SendTaskSuccess",
    }  # no SendTaskFailure: nothing in the API fails a task
    (start,) = by_action["states:StartExecution"]
    assert start["Ref"].startswith("JobsStateMachine")
    assert by_action["states:ListExecutions"] == [start]
    for action in (
        "states:DescribeExecution",
        "states:GetExecutionHistory",
        "states:StopExecution",
    ):
        (res,) = by_action[action]
        assert res["Fn::Join"][1][-1] == ":execution:ElsaiStack-jobs:*"
    # Task-token APIs cannot be scoped (acknowledged in elsai/cdk/nag.py).
    assert by_action["states:SendTaskSuccess"] == ["*"]


@pytest.mark.parametrize(
    ("layout", "prefixes"),
    [("template_dict", ("/owners/*", "")), ("shared_template_dict", ("",))],
)
def test_api_may_write_only_cancel_records_answer_claims_and_version_records(
    request: pytest.FixtureRequest, layout: str, prefixes: tuple[str, ...]
) -> None:
    s3 = _for_service(_statements(request.getfixturevalue(layout), "ApiFunctionRole"), "s3")
    writes = [s for s in s3 if any(a.startswith(("s3:Put", "s3:Delete")) for a in _actions(s))]
    (stmt,) = writes
    assert _actions(stmt) == ["s3:PutObject"]
    suffixes = {res["Fn::Join"][1][-1] for res in _resources_of(stmt)}
    assert suffixes == {
        f"{p}/jobs/*/{record}"
        for p in prefixes
        for record in ("cancelled.json", "answers/*", "version.json", "node_waits.json")
    }


def test_state_machine_may_only_invoke_the_agent_function(template_dict: dict[str, Any]) -> None:
    lam = _for_service(_statements(template_dict, "JobsStateMachineRole"), "lambda")
    assert [a for s in lam for a in _actions(s)] == ["lambda:InvokeFunction"]
    for res in _resources_of(lam[0]):
        assert "AgentFunction" in json.dumps(res)
    assert not _for_service(_statements(template_dict, "JobsStateMachineRole"), "s3")
