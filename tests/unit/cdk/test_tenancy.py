"""``tenantIsolation``: the per-job tenant role, the session policy, the API's owner grants.

The isolated stack synthesizes with cdk-nag clean; the agent function itself keeps no S3
access (a slice reaches S3 only through the tenant role, narrowed per job); the API reads
and writes only under ``owners/``; a Cognito user pool authorizer is an opt-in.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elsai.cdk.config import ElsaiConfig
from elsai.ids import MAX_ID_LENGTH
from elsai.serverless.limits import MAX_JOB_ID_LENGTH
from elsai.serverless.scoped import TENANT_ROLE_ENV, session_policy
from elsai.session.layout import keys
from tests.unit.cdk.test_nag import assert_clean

ADMIN = "arn:aws:iam::123456789012:role/ops/ops-admin"
POOL = "arn:aws:cognito-idp:us-east-1:123456789012:userpool/us-east-1_Example1"


def _synth(tmp: Path, context: dict[str, Any]) -> dict[str, Any]:
    from infra.app import build_app

    app, stack = build_app({"aws:cdk:bundling-stacks": [], **context}, outdir=str(tmp))
    assembly = app.synth()  # raises on any unacknowledged cdk-nag finding
    assert_clean(tmp / "validation-report.json")
    return dict(assembly.get_stack_by_name(stack.stack_name).template)


@pytest.fixture(scope="module")
def isolated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _synth(tmp_path_factory.mktemp("iso"), {"tenantIsolation": "true", "adminArns": ADMIN})


def _resources(template: dict[str, Any], kind: str, prefix: str) -> list[dict[str, Any]]:
    return [
        v["Properties"]
        for k, v in template["Resources"].items()
        if v["Type"] == kind and k.startswith(prefix)
    ]


def _statements(template: dict[str, Any], role_prefix: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for policy in _resources(template, "AWS::IAM::Policy", ""):
        if any(r["Ref"].startswith(role_prefix) for r in policy["Roles"]):
            out += policy["PolicyDocument"]["Statement"]
    return out


def _listify(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _s3_object_patterns(template: dict[str, Any], role_prefix: str) -> set[str]:
    out = set()
    for stmt in _statements(template, role_prefix):
        if any(a.startswith("s3:") for a in _listify(stmt["Action"])):
            for resource in _listify(stmt["Resource"]):
                if isinstance(resource, dict) and "Fn::Join" in resource:
                    out.add(resource["Fn::Join"][1][-1])
    return out


def _env(template: dict[str, Any], prefix: str) -> dict[str, Any]:
    (fn,) = _resources(template, "AWS::Lambda::Function", prefix)
    return dict(fn["Environment"]["Variables"])


def test_tenant_role_is_assumable_by_the_agent_function_only(isolated: dict[str, Any]) -> None:
    (role,) = _resources(isolated, "AWS::IAM::Role", "TenantRole")
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Action"] == "sts:AssumeRole"
    assert trust["Principal"]["AWS"]["Fn::GetAtt"][0].startswith("AgentFunctionRole")
    assert role["MaxSessionDuration"] == 3600
    tenant_arn = _env(isolated, "AgentFunction")[TENANT_ROLE_ENV]
    assert tenant_arn["Fn::GetAtt"][0].startswith("TenantRole")
    assumes = [
        s for s in _statements(isolated, "AgentFunctionRole") if s["Action"] == "sts:AssumeRole"
    ]
    assert [s["Resource"] for s in assumes] == [tenant_arn]


def test_tenant_role_reaches_owners_prefix_and_the_model_never_deletes(
    isolated: dict[str, Any],
) -> None:
    assert _s3_object_patterns(isolated, "TenantRole") == {"/owners/*"}
    actions = {a for s in _statements(isolated, "TenantRole") for a in _listify(s["Action"])}
    assert not any(a.startswith("s3:Delete") for a in actions)
    assert {"bedrock:InvokeModel", "s3:PutObject", "s3:GetObject*"} <= actions


def test_agent_function_keeps_no_s3_access_of_its_own(isolated: dict[str, Any]) -> None:
    actions = {a for s in _statements(isolated, "AgentFunctionRole") for a in _listify(s["Action"])}
    assert not any(a.startswith("s3:") for a in actions), actions


def test_api_checks_owners_and_touches_only_owner_prefixes(isolated: dict[str, Any]) -> None:
    env = _env(isolated, "ApiFunction")
    assert env["ELSAI_TENANCY"] == "owner" and env["ELSAI_ADMIN_ARNS"] == ADMIN
    assert "ELSAI_AUTH" not in env  # IAM (SigV4) identities
    assert _s3_object_patterns(isolated, "ApiFunctionRole") == {
        "/owners/*",
        "/owners/*/jobs/*/cancelled.json",
        "/owners/*/jobs/*/answers/*",
        "/owners/*/jobs/*/version.json",
    }
    methods = _resources(isolated, "AWS::ApiGateway::Method", "")
    assert methods and {m["AuthorizationType"] for m in methods} == {"AWS_IAM"}


def test_cognito_authorizer_is_an_opt_in(tmp_path: Path) -> None:
    template = _synth(
        tmp_path,
        {"tenantIsolation": "true", "cognitoUserPoolArn": POOL, "adminGroups": "ops,oncall"},
    )
    env = _env(template, "ApiFunction")
    assert (env["ELSAI_AUTH"], env["ELSAI_ADMIN_GROUPS"]) == ("cognito", "ops,oncall")
    methods = _resources(template, "AWS::ApiGateway::Method", "")
    assert {m["AuthorizationType"] for m in methods} == {"COGNITO_USER_POOLS"}
    (authorizer,) = _resources(template, "AWS::ApiGateway::Authorizer", "")
    assert authorizer["ProviderARNs"] == [POOL]


def test_default_stack_has_no_tenant_role(template_dict: dict[str, Any]) -> None:
    assert not _resources(template_dict, "AWS::IAM::Role", "TenantRole")
    assert "ELSAI_TENANCY" not in _env(template_dict, "ApiFunction")


def test_session_policy_names_exactly_one_job_and_fits_the_sts_limit() -> None:
    prefix = keys.owner_prefix(keys.owner_tag("iam:someone"))
    session, job = "s" * MAX_ID_LENGTH, "j" * MAX_JOB_ID_LENGTH
    policy = session_policy("b" * 63, prefix, session, job)
    (objects,) = [s for s in policy["Statement"] if s["Sid"] == "OwnSessionAndJob"]
    assert objects["Resource"] == [
        f"arn:aws:s3:::{'b' * 63}/{prefix}session_{session}/*",
        f"arn:aws:s3:::{'b' * 63}/{prefix}jobs/{job}/*",
    ]
    assert not any(
        "Delete" in a for s in policy["Statement"] for a in _listify(s.get("Action", []))
    )
    assert len(json.dumps(policy, separators=(",", ":"))) <= 2048  # AssumeRole's Policy cap
    with pytest.raises(ValueError):
        session_policy("bucket", prefix, "../x", job)


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        ({}, (False, ())),
        ({"tenantIsolation": "true", "adminArns": f"{ADMIN}, arn:aws:iam::1:user/x"},
         (True, (ADMIN, "arn:aws:iam::1:user/x"))),
        ({"tenantIsolation": True, "adminArns": [ADMIN]}, (True, (ADMIN,))),
    ],
)  # fmt: skip
def test_tenancy_knobs_parse(context: dict[str, Any], expected: tuple[Any, ...]) -> None:
    import aws_cdk as cdk

    app = cdk.App(context=context)
    config = ElsaiConfig.from_node(app.node)
    assert (config.tenant_isolation, config.admin_arns) == expected


def test_a_bad_isolation_flag_is_refused() -> None:
    import aws_cdk as cdk

    with pytest.raises(ValueError, match="tenantIsolation"):
        ElsaiConfig.from_node(cdk.App(context={"tenantIsolation": "yes please"}).node)


def test_retention_sweeper_is_refused_with_isolation_rather_than_silently_idle() -> None:
    with pytest.raises(ValueError, match="sessionRetentionDays cannot be combined"):
        ElsaiConfig(tenant_isolation=True, session_retention_days=30)
