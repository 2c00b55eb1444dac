"""REST API: IAM on every method, request validation, access logs, throttling.

Which methods exist, their path parameters and request models come from the jobs API's
table (`elsai.serverless.contract.jobs_api`); tests/unit/cdk/test_api_table.py compares the
synthesized API with it row by row. The literal bodies below pin what the gate admits.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from aws_cdk.assertions import Match, Template

from elsai.serverless.contract.jobs_api import JobsApi


def _of_type(template_dict: dict[str, Any], rtype: str) -> dict[str, dict[str, Any]]:
    return {k: v["Properties"] for k, v in template_dict["Resources"].items() if v["Type"] == rtype}


def _paths(template_dict: dict[str, Any]) -> dict[str, str]:
    """Logical id of each API resource -> its full path (``/jobs/{id}``)."""
    res = _of_type(template_dict, "AWS::ApiGateway::Resource")
    out: dict[str, str] = {}

    def path(lid: str) -> str:
        props = res[lid]
        parent = props["ParentId"]
        prefix = path(parent["Ref"]) if "Ref" in parent else ""
        return f"{prefix}/{props['PathPart']}"

    for lid in res:
        out[lid] = path(lid)
    return out


def test_routes_and_iam_authorization(template_dict: dict[str, Any]) -> None:
    paths = _paths(template_dict)
    methods = _of_type(template_dict, "AWS::ApiGateway::Method")
    routes = {(m["HttpMethod"], paths[m["ResourceId"]["Ref"]]) for m in methods.values()}
    assert routes == {(op.method, op.path) for op in JobsApi.operations()}
    assert ("POST", "/jobs") in routes and ("GET", "/sessions/{session_id}") in routes
    for m in methods.values():
        assert m["AuthorizationType"] == "AWS_IAM"
        assert m["Integration"]["Type"] == "AWS_PROXY"
        assert "ApiFunction" in str(m["Integration"]["Uri"])
        assert m["RequestValidatorId"]["Ref"].startswith("ApiRestApiValidator")


def test_request_validator_and_models(template_dict: dict[str, Any]) -> None:
    (validator,) = _of_type(template_dict, "AWS::ApiGateway::RequestValidator").values()
    assert validator["ValidateRequestBody"] is True
    assert validator["ValidateRequestParameters"] is True
    schemas = [m["Schema"] for m in _of_type(template_dict, "AWS::ApiGateway::Model").values()]
    assert len(schemas) == len({op.request for op in JobsApi.operations() if op.request})
    assert any(s.get("required") == ["prompt"] for s in schemas)
    assert any(s.get("required") == ["responses"] for s in schemas)
    paths = _paths(template_dict)
    for m in _of_type(template_dict, "AWS::ApiGateway::Method").values():
        path = paths[m["ResourceId"]["Ref"]]
        for param in ("job_id", "session_id"):
            if f"{{{param}}}" in path:
                assert m["RequestParameters"] == {f"method.request.path.{param}": True}
        if (m["HttpMethod"], path) in {("POST", "/jobs"), ("POST", "/jobs/{job_id}/responses")}:
            assert "application/json" in m["RequestModels"]


def _schema_for(template_dict: dict[str, Any], required: str) -> dict[str, Any]:
    (schema,) = [
        m["Schema"]
        for m in _of_type(template_dict, "AWS::ApiGateway::Model").values()
        if m["Schema"].get("required") == [required]
    ]
    return schema


@pytest.mark.parametrize(
    ("required", "body", "ok"),
    [
        ("prompt", {"prompt": "hi"}, True),
        ("prompt", {"prompt": "hi", "session_id": "s-1.a:b", "agent_id": "agent"}, True),
        ("prompt", {"session_id": "s1"}, False),
        ("prompt", {"prompt": ""}, False),
        ("prompt", {"prompt": "hi", "session_id": "../etc"}, False),
        ("prompt", {"prompt": "hi", "session_id": None}, True),  # the handler's default too
        ("prompt", {"prompt": "hi", "version_policy": "no-such"}, True),  # the handler's 400
        ("prompt", {"prompt": "hi", "extra": 1}, True),  # the handler's 400 names the field
        ("responses", {"responses": [{"interruptId": "i1", "response": {"ok": True}}]}, True),
        ("responses", {"responses": [{"id": "i1", "response": {"ok": True}}]}, True),  # id alias
        ("responses", {"responses": [{"id": "", "response": 1}]}, False),
        ("responses", {"responses": []}, False),
        ("responses", {"responses": [{"response": 1}]}, False),
        ("responses", {"interrupt_responses": []}, False),
    ],
)
def test_request_models_match_the_api_handler_contract(
    template_dict: dict[str, Any], required: str, body: dict[str, Any], ok: bool
) -> None:
    validator = jsonschema.Draft4Validator(_schema_for(template_dict, required))
    assert validator.is_valid(body) is ok


def test_stage_access_logs_throttling_and_tracing(template: Template) -> None:
    template.has_resource_properties(
        "AWS::ApiGateway::Stage",
        {
            "StageName": "v1",
            "TracingEnabled": True,
            "AccessLogSetting": {
                "DestinationArn": {
                    "Fn::GetAtt": [Match.string_like_regexp("^ApiAccessLogs"), "Arn"]
                },
                "Format": Match.string_like_regexp("requestId"),
            },
            "MethodSettings": Match.array_with(
                [
                    Match.object_like(
                        {
                            "HttpMethod": "*",
                            "ResourcePath": "/*",
                            "LoggingLevel": "ERROR",
                            "DataTraceEnabled": False,
                            "ThrottlingRateLimit": 20,
                            "ThrottlingBurstLimit": 40,
                        }
                    )
                ]
            ),
        },
    )


def test_lambda_permissions_are_scoped_to_this_api(template_dict: dict[str, Any]) -> None:
    perms = _of_type(template_dict, "AWS::Lambda::Permission")
    assert len(perms) == len(JobsApi.operations())  # one per method, no test-invoke permissions
    for p in perms.values():
        assert p["Principal"] == "apigateway.amazonaws.com"
        assert "ApiRestApi" in str(p["SourceArn"])


def test_request_models_are_built_from_the_limits_module(template_dict: dict[str, Any]) -> None:
    """The gate and the handler share `elsai.serverless.limits`, so they cannot drift apart."""
    from elsai.serverless import limits

    job = _schema_for(template_dict, "prompt")["properties"]
    assert job["prompt"]["maxLength"] == limits.MAX_PROMPT_CHARS
    assert job["agent_id"]["pattern"] == limits.SAFE_ID_PATTERN
    assert job["agent_id"]["maxLength"] == limits.MAX_ID_LENGTH
    assert {"type": "null"} in job["session_id"]["anyOf"]
    answers = _schema_for(template_dict, "responses")["properties"]["responses"]
    assert answers["maxItems"] == limits.MAX_INTERRUPT_RESPONSES
