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
from elsai.serverless.contract import service_keys
from elsai.serverless.limits import MAX_JOB_ID_LENGTH
from elsai.serverless.scoped import TENANT_ROLE_ENV, session_policy
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
    return _synth(tmp_path_factory.mktemp("iso"), {"adminArns": ADMIN})  # isolated by default


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
        "/session_*",  # jobs from before isolation, for admins (jobs_api.owner)
        "/jobs/*",
        "/jobs/*/cancelled.json",
        "/jobs/*/answers/*",
        "/owners/*/jobs/*/version.json",
        "/jobs/*/version.json",
        "/owners/*/jobs/*/node_waits.json",
        "/jobs/*/node_waits.json",
    }
    writes = [
        s for s in _statements(isolated, "ApiFunctionRole")
        if any(a.startswith(("s3:Put", "s3:Delete")) for a in _listify(s["Action"]))
    ]  # fmt: skip
    assert {r["Fn::Join"][1][-1] for s in writes for r in _listify(s["Resource"])} == {
        "/owners/*/jobs/*/cancelled.json",
        "/owners/*/jobs/*/answers/*",
        "/jobs/*/cancelled.json",
        "/jobs/*/answers/*",
        "/owners/*/jobs/*/version.json",
        "/jobs/*/version.json",
        "/owners/*/jobs/*/node_waits.json",
        "/jobs/*/node_waits.json",
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


def test_the_default_stack_isolates_its_callers_without_a_warning(
    synthesized: dict[str, Any],
) -> None:
    from aws_cdk.assertions import Annotations, Match

    template = synthesized["template"]
    assert _resources(template, "AWS::IAM::Role", "TenantRole")
    assert _env(template, "ApiFunction")["ELSAI_TENANCY"] == "owner"
    assert TENANT_ROLE_ENV in _env(template, "AgentFunction")
    Annotations.from_stack(synthesized["stack"]).has_no_warning(
        "*", Match.string_like_regexp(".*tenantIsolation=false.*")
    )


def test_opting_out_is_explicit_and_synth_warns(tmp_path: Path) -> None:
    from aws_cdk.assertions import Annotations, Match

    from infra.app import build_app

    app, stack = build_app(
        {"aws:cdk:bundling-stacks": [], "tenantIsolation": "false"}, outdir=str(tmp_path)
    )
    template = dict(app.synth().get_stack_by_name(stack.stack_name).template)
    assert not _resources(template, "AWS::IAM::Role", "TenantRole")
    assert "ELSAI_TENANCY" not in _env(template, "ApiFunction")
    Annotations.from_stack(stack).has_warning(
        "/ElsaiStack/Default", Match.string_like_regexp("tenantIsolation=false: every caller.*")
    )


def test_session_policy_names_exactly_one_job_and_fits_the_sts_limit() -> None:
    prefix = service_keys.owner_prefix(service_keys.owner_tag("iam:someone"))
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
    (listing,) = [s for s in policy["Statement"] if s["Sid"] == "ListOwnPrefixesOnly"]
    assert listing["Resource"] == f"arn:aws:s3:::{'b' * 63}"
    assert listing["Condition"] == {"StringLike": {"s3:prefix": [
        f"{prefix}session_{session}/*", f"{prefix}jobs/{job}/*"]}}  # fmt: skip
    # Wildcards in an id are literal (IAM's ${*} ...), and even then the policy fits.
    starred = session_policy("b" * 63, prefix, "*" * MAX_ID_LENGTH, job)
    assert len(json.dumps(starred, separators=(",", ":"))) <= 2048
    (own,) = [s for s in starred["Statement"] if s["Sid"] == "OwnSessionAndJob"]
    assert own["Resource"][0].endswith("session_" + "${*}" * MAX_ID_LENGTH + "/*")
    with pytest.raises(ValueError):
        session_policy("bucket", prefix, "../x", job)


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        ({}, (True, ())),
        ({"tenantIsolation": "false"}, (False, ())),
        ({"tenantIsolation": False}, (False, ())),
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


def test_retention_and_isolation_combine() -> None:
    """The sweeper walks every owner's prefix (elsai.serverless.retention), so synth allows it."""
    config = ElsaiConfig(tenant_isolation=True, session_retention_days=30)
    assert config.tenant_isolation and config.session_retention_days == 30
