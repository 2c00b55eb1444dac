"""The synthesized jobs API is its table: one method per row, the rows' models, the rows' grants.

Each test reads the template on one side and `JobsApi.operations()` on the other, so a method,
model or grant edited in `elsai.cdk` alone (or a row edited without the CDK following) fails.
The gate is never stricter than the handler: a body the handler's model accepts passes the
gateway's schema (property-based, with hypothesis).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import aws_cdk as cdk
import jsonschema
import pytest
from aws_cdk import assertions
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from elsai.cdk.api import add_routes
from elsai.cdk.gateway_models import gateway_schema
from elsai.serverless.contract.http import EVENT_STREAM, READ_ACTIONS
from elsai.serverless.contract.jobs_api import JobsApi
from elsai.serverless.contract.jobs_api_requests import AnswerJob, StartJob
from tests.unit.cdk.test_api import _of_type, _paths

ROWS = JobsApi.operations()


def _methods(template: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    paths = _paths(template)
    return {
        (m["HttpMethod"], paths[m["ResourceId"]["Ref"]]): m
        for m in _of_type(template, "AWS::ApiGateway::Method").values()
    }


def test_each_row_is_one_method_with_its_path_parameters_and_model(
    template_dict: dict[str, Any],
) -> None:
    methods = _methods(template_dict)
    models = _of_type(template_dict, "AWS::ApiGateway::Model")
    assert set(methods) == {(op.method, op.path) for op in ROWS}
    for op in ROWS:
        method = methods[(op.method, op.path)]
        declared = {f"method.request.path.{p.name}": True for p in op.of("path")}
        assert method.get("RequestParameters", {}) == declared, op.id
        if op.request is None:
            assert "RequestModels" not in method, op.id
            continue
        (ref,) = method["RequestModels"].values()
        schema = dict(models[ref["Ref"]]["Schema"])
        assert schema.pop("$schema") == "http://json-schema.org/draft-04/schema#"
        assert schema == gateway_schema(op.request), op.id


def _target(resource: Any) -> str:
    """What a statement's resource is, in the table's words."""
    text = json.dumps(resource)
    if resource == "*":
        return "task_tokens"
    if isinstance(resource, dict) and "Ref" in resource and "StateMachine" in resource["Ref"]:
        return "state_machine"
    if ":execution:" in text:
        return "executions"
    if isinstance(resource, dict) and "Fn::GetAtt" in resource:
        return "bucket"
    if isinstance(resource, dict) and "Fn::Join" in resource:
        return "objects:" + resource["Fn::Join"][1][-1].lstrip("/")
    raise AssertionError(f"unexpected resource {text}")


def _granted(template: dict[str, Any]) -> set[tuple[str, str]]:
    """(action, target) of every states/s3 permission the API function's role has."""
    out: set[tuple[str, str]] = set()
    for policy in _of_type(template, "AWS::IAM::Policy").values():
        if not any(r["Ref"].startswith("ApiFunctionRole") for r in policy["Roles"]):
            continue
        for statement in policy["PolicyDocument"]["Statement"]:
            actions = statement["Action"]
            resources = statement["Resource"]
            for action in actions if isinstance(actions, list) else [actions]:
                if action.split(":")[0] in ("states", "s3"):
                    for resource in resources if isinstance(resources, list) else [resources]:
                        out.add((action, _target(resource)))
    return out


def _needed(isolated: bool) -> set[tuple[str, str]]:
    """What the rows' grants add up to, as IAM should show it."""
    out: set[tuple[str, str]] = set()
    reads = ["owners/*"] if isolated else []
    for grant in (g for op in ROWS for g in op.grants):
        if grant.on != "objects":
            out |= {(a, grant.on) for a in grant.actions}
        elif grant.actions == READ_ACTIONS:
            reads += grant.keys
        else:
            keys = [*grant.keys, *(f"owners/*/{k}" for k in grant.keys if isolated)]
            out |= {(a, f"objects:{k}") for a in grant.actions for k in keys}
    for prefix in reads:
        out |= {(a, t) for a in READ_ACTIONS for t in ("bucket", f"objects:{prefix}")}
    return out


def test_the_api_role_has_exactly_the_rows_grants(
    template_dict: dict[str, Any], shared_template_dict: dict[str, Any]
) -> None:
    assert _granted(template_dict) == _needed(isolated=True)
    assert _granted(shared_template_dict) == _needed(isolated=False)
    assert ("states:SendTaskSuccess", "task_tokens") in _needed(isolated=False)


_SAFE_ID = st.from_regex(r"\.?[A-Za-z0-9_:-]{1,5}(\.[A-Za-z0-9_:-]{1,3})?\.?", fullmatch=True)
_ID = st.one_of(_SAFE_ID, st.none(), st.text(max_size=4))
_ANY = st.one_of(st.none(), st.integers(), st.text(max_size=3), st.booleans())
_ANSWER = st.one_of(
    st.fixed_dictionaries({"response": _ANY, "id": st.text(min_size=1, max_size=5)}),
    st.fixed_dictionaries({"response": _ANY, "interruptId": st.text(min_size=1, max_size=5)}),
    st.fixed_dictionaries({}, optional={"id": _ID, "interruptId": _ID, "response": _ANY}),
)
# Mostly bodies the handler accepts, with the odd field the gate must let through anyway.
_BODIES: dict[type[BaseModel], st.SearchStrategy[Any]] = {
    StartJob: st.fixed_dictionaries(
        {"prompt": st.text(min_size=1, max_size=8)},
        optional={
            "session_id": _ID,
            "agent_id": _SAFE_ID,
            "version_policy": st.sampled_from(["pinned", "upgrade_on_resume", "other"]),
        },
    ),
    AnswerJob: st.fixed_dictionaries({"responses": st.lists(_ANSWER, min_size=1, max_size=3)}),
}


@pytest.mark.parametrize("model", sorted({op.request for op in ROWS if op.request}, key=str))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_gate_never_refuses_a_body_the_handler_accepts(
    model: type[BaseModel], data: st.DataObject
) -> None:
    body = data.draw(_BODIES[model])
    gate = jsonschema.Draft4Validator(gateway_schema(model))
    try:
        model.model_validate(body)
    except ValidationError:
        return  # the handler refuses it: the gate may say anything
    assert gate.is_valid(body), body


def test_a_streaming_row_gets_a_streaming_integration() -> None:
    """A row whose answer is a stream (server-sent events) is proxied with response streaming."""
    (start,) = [op for op in ROWS if op.id == "startJob"]
    rows = (start, replace(start, id="runJob", path="/runs", media_type=EVENT_STREAM))
    stack = cdk.Stack(cdk.App(), "Streams")
    api = apigw.RestApi(stack, "Api")
    fn = lambda_.Function(
        stack, "Fn", runtime=lambda_.Runtime.PYTHON_3_12, handler="x.handler",
        code=lambda_.Code.from_inline("def handler(e, c): pass"),
    )  # fmt: skip
    add_routes(api, fn, api.add_request_validator("V", validate_request_body=True), rows)
    template = assertions.Template.from_stack(stack).to_json()
    modes = {
        _paths(template)[m["ResourceId"]["Ref"]]: m["Integration"].get("ResponseTransferMode")
        for m in _of_type(template, "AWS::ApiGateway::Method").values()
    }
    assert modes == {"/jobs": None, "/runs": "STREAM"}
