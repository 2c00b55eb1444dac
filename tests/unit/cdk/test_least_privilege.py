"""Least privilege on the sessions bucket: each role reaches only the prefixes it uses.

Single-caller layout (``tenantIsolation=false``): the agent reads and puts ``session_*`` and
``jobs/*`` and deletes nothing (a ``s3:DeleteObjectVersion`` would let a bug undo
versioning); the API only reads them. (The default, isolated layout: tests/unit/cdk/test_tenancy.py.)
The opt-in sweeper lists and deletes current objects under ``session_*`` and each owner's
``owners/*/session_*``, never versions.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from elsai.serverless.contract import service_keys
from elsai.session.layout import keys
from infra.synth import synth_template


def _statements(template: dict[str, Any], role_prefix: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for policy in template["Resources"].values():
        if policy["Type"] != "AWS::IAM::Policy":
            continue
        roles = [r["Ref"] for r in policy["Properties"]["Roles"]]
        if any(r.startswith(role_prefix) for r in roles):
            out += policy["Properties"]["PolicyDocument"]["Statement"]
    return out


def _listify(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _s3(template: dict[str, Any], role_prefix: str) -> list[tuple[str, str]]:
    """(action, rendered resource) pairs of the role's S3 statements."""
    pairs = []
    for stmt in _statements(template, role_prefix):
        for action in _listify(stmt["Action"]):
            if action.startswith("s3:"):
                pairs += [(action, json.dumps(r)) for r in _listify(stmt["Resource"])]
    return pairs


def _object_suffixes(pairs: list[tuple[str, str]]) -> set[str]:
    """The key patterns (after ``<bucket arn>/``) that object-level grants name."""
    out = set()
    for _, rendered in pairs:
        resource = json.loads(rendered)
        if isinstance(resource, dict) and "Fn::Join" in resource:
            out.add(resource["Fn::Join"][1][-1])
    return out


API_WRITES = {
    "/jobs/*/cancelled.json",
    "/jobs/*/answers/*",
    "/jobs/*/version.json",
    "/jobs/*/node_waits.json",
}


@pytest.mark.parametrize("role", ["AgentFunctionRole", "ApiFunctionRole"])
def test_object_grants_name_only_the_session_and_job_prefixes(
    shared_template_dict: dict[str, Any], role: str
) -> None:
    pairs = [(a, r) for a, r in _s3(shared_template_dict, role) if not a.startswith("s3:Put")]
    assert _object_suffixes(pairs) == {"/session_*", "/jobs/*"}
    assert not any(a.startswith("s3:Delete") for a, _ in _s3(shared_template_dict, role))


def test_agent_may_put_but_the_api_only_its_two_records(
    shared_template_dict: dict[str, Any],
) -> None:
    agent = {a for a, _ in _s3(shared_template_dict, "AgentFunctionRole")}
    api = _s3(shared_template_dict, "ApiFunctionRole")
    assert "s3:PutObject" in agent and "s3:GetObject*" in agent
    assert "s3:GetObject*" in {a for a, _ in api}
    puts = [(a, r) for a, r in api if a.startswith(("s3:Put", "s3:Abort"))]
    assert {a for a, _ in puts} == {"s3:PutObject"}
    # Cancel records and answer claims only: never a session's messages or bookmark.
    assert _object_suffixes(puts) == API_WRITES


@pytest.fixture(scope="module")
def retention_template() -> dict[str, Any]:
    return synth_template({"sessionRetentionDays": 30})


def test_no_sweeper_unless_retention_is_asked_for(template_dict: dict[str, Any]) -> None:
    handlers = [
        v["Properties"]["Handler"] for v in template_dict["Resources"].values()
        if v["Type"] == "AWS::Lambda::Function"
    ]  # fmt: skip
    assert "elsai_lambdas.sweeper.handler" not in handlers
    assert not [v for v in template_dict["Resources"].values() if v["Type"] == "AWS::Events::Rule"]


def test_sweeper_lists_and_deletes_current_session_objects_only(
    retention_template: dict[str, Any],
) -> None:
    pairs = _s3(retention_template, "RetentionFunctionRole")
    assert {a for a, _ in pairs} == {"s3:ListBucket", "s3:DeleteObject", "s3:GetObject"}
    reads = [json.loads(r)["Fn::Join"][1][-1] for a, r in pairs if a == "s3:GetObject"]
    assert sorted(reads) == ["/jobs/*/version.json", "/owners/*/jobs/*/version.json"]
    deletes = [json.loads(r)["Fn::Join"][1][-1] for a, r in pairs if a == "s3:DeleteObject"]
    assert sorted(deletes) == ["/owners/*/session_*", "/session_*"]
    (fn,) = [
        v["Properties"] for v in retention_template["Resources"].values()
        if v["Type"] == "AWS::Lambda::Function" and v["Properties"]["Handler"] == "elsai_lambdas.sweeper.handler"
    ]  # fmt: skip
    assert fn["Environment"]["Variables"]["ELSAI_SESSION_IDLE_DAYS"] == "30"
    (rule,) = [
        v["Properties"] for v in retention_template["Resources"].values()
        if v["Type"] == "AWS::Events::Rule"
    ]  # fmt: skip
    assert rule["ScheduleExpression"] == "rate(1 day)"


def test_no_lifecycle_rule_expires_sessions_by_object_age(
    template_dict: dict[str, Any], retention_template: dict[str, Any]
) -> None:
    for template in (template_dict, retention_template):
        for resource in template["Resources"].values():
            if resource["Type"] != "AWS::S3::Bucket":
                continue
            rules = resource["Properties"].get("LifecycleConfiguration", {}).get("Rules", [])
            for rule in rules:
                if "ExpirationInDays" in rule and rule["Id"] != "expire-access-logs":
                    # Only parked task tokens expire by age (one object per job): at the
                    # root by prefix, under every owner by the tag only their writes carry.
                    tagged = [
                        {"Key": service_keys.EXPIRING_TAG[0], "Value": service_keys.EXPIRING_TAG[1]}
                    ]
                    assert rule.get("Prefix") == "jobs/" or rule.get("TagFilters") == tagged
                    assert rule.get("Prefix") != "jobs/" or "TagFilters" not in rule, rule


def test_only_parked_tokens_carry_the_expiry_tag() -> None:
    owner = service_keys.owner_prefix(service_keys.owner_tag("iam:alice"))
    job = "o" + "a" * 24 + "-j1"
    tagged = f"{service_keys.EXPIRING_TAG[0]}={service_keys.EXPIRING_TAG[1]}"
    assert service_keys.object_tagging(service_keys.job_token_key(job)) == tagged
    assert service_keys.object_tagging(owner + service_keys.job_token_key(job)) == tagged
    for key in (
        keys.session_key("s1"),
        keys.message_key("s1", "agent", 0),
        keys.checkpoint_key("s1", "agent"),
        service_keys.job_cancel_key(job),
        service_keys.job_answer_key(job, "token"),
        f"session_x/jobs/{job}/task_token.json",  # a session directory named like a job's
    ):
        assert service_keys.object_tagging(key) is None, key
        assert service_keys.object_tagging(owner + key) is None, key


def test_sweeper_may_only_read_which_jobs_of_this_machine_are_live(
    retention_template: dict[str, Any],
) -> None:
    states = [
        (a, r)
        for stmt in _statements(retention_template, "RetentionFunctionRole")
        for a in _listify(stmt["Action"])
        for r in _listify(stmt["Resource"])
        if a.startswith("states:")
    ]
    assert sorted(a for a, _ in states) == ["states:DescribeExecution", "states:ListExecutions"]
    resources = dict(states)
    assert resources["states:ListExecutions"] == {"Ref": resources["states:ListExecutions"]["Ref"]}
    assert resources["states:ListExecutions"]["Ref"].startswith("JobsStateMachine")
    described = resources["states:DescribeExecution"]["Fn::Join"][1][-1]
    assert described.endswith(":execution:ElsaiStack-jobs:*"), described
    (fn,) = [
        v["Properties"] for v in retention_template["Resources"].values()
        if v["Type"] == "AWS::Lambda::Function" and v["Properties"]["Handler"] == "elsai_lambdas.sweeper.handler"
    ]  # fmt: skip
    machine = fn["Environment"]["Variables"]["ELSAI_STATE_MACHINE_ARN"]
    assert machine == resources["states:ListExecutions"]


def test_a_retention_shorter_than_the_interrupt_wait_is_refused_at_synth() -> None:
    with pytest.raises(ValueError, match=r"sessionRetentionDays \(1\) is shorter.*interruptWait"):
        synth_template({"sessionRetentionDays": 1, "interruptWaitSeconds": 7 * 86_400})


def test_sweeper_may_list_the_agent_versions_and_delete_only_qualified_arns(
    retention_template: dict[str, Any],
) -> None:
    grants = [
        (a, r)
        for stmt in _statements(retention_template, "RetentionFunctionRole")
        for a in _listify(stmt["Action"])
        for r in _listify(stmt["Resource"])
        if a.startswith("lambda:")
    ]
    assert sorted(a for a, _ in grants) == [
        "lambda:DeleteFunction",
        "lambda:ListVersionsByFunction",
    ]
    resources = dict(grants)
    listed = resources["lambda:ListVersionsByFunction"]["Fn::GetAtt"]
    assert listed[0].startswith("AgentFunction") and listed[1] == "Arn"  # the function, unqualified
    deleted = resources["lambda:DeleteFunction"]["Fn::Join"][1]
    assert deleted[0] == {"Fn::GetAtt": listed} and deleted[1] == ":*"  # its versions only
    reads = sorted(
        json.dumps(r)
        for stmt in _statements(retention_template, "RetentionFunctionRole")
        for a in _listify(stmt["Action"])
        for r in _listify(stmt["Resource"])
        if a == "s3:GetObject"
    )
    assert len(reads) == 2 and all("version.json" in r for r in reads), reads
