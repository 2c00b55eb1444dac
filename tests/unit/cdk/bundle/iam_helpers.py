"""Credentials bound to a synthesized role's policies, for moto's IAM enforcement.

The role's statements are read from the template (whatever they are today), their intrinsics
(`Ref`, `Fn::GetAtt`, `Fn::Join`) resolved to the ARNs of the resources created in moto, and put
on a moto IAM user whose access keys the handler then runs with. moto checks IAM only when asked: inside
`moto.core.authorization.enable_iam_authentication()` (INITIAL_NO_AUTH_ACTION_COUNT = 0).
"""

from __future__ import annotations

import fnmatch
import json
import uuid
from typing import Any

from elsai.local.definition import DEFAULT_PSEUDO

REGION = DEFAULT_PSEUDO["AWS::Region"]
ACCOUNT = DEFAULT_PSEUDO["AWS::AccountId"]


def resource_values(template: dict[str, Any], names: dict[str, str]) -> dict[str, dict[str, str]]:
    """`{logical id: {"Ref": ..., "Arn": ..., "Name": ...}}` for every resource in `template`.

    `names` maps a logical-id prefix to the physical name used in moto (bucket name, state
    machine name); other resources get their logical id as name (their ARNs only need to parse).
    """
    out: dict[str, dict[str, str]] = {}
    for lid, res in template["Resources"].items():
        matches = [n for prefix, n in names.items() if lid.startswith(prefix)]
        name = matches[0] if matches else lid
        rtype = res["Type"]
        if rtype == "AWS::S3::Bucket":
            out[lid] = {"Ref": name, "Arn": f"arn:aws:s3:::{name}"}
        elif rtype == "AWS::StepFunctions::StateMachine":
            arn = f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{name}"
            out[lid] = {"Ref": arn, "Arn": arn, "Name": name}
        elif rtype == "AWS::Logs::LogGroup":
            out[lid] = {"Ref": name, "Arn": f"arn:aws:logs:{REGION}:{ACCOUNT}:log-group:{name}:*"}
        elif rtype == "AWS::Lambda::Function":
            arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}"
            out[lid] = {"Ref": name, "Arn": arn}
        else:
            out[lid] = {"Ref": name}
    return out


def resolve(node: Any, values: dict[str, dict[str, str]]) -> Any:
    """`node` with every intrinsic replaced by a value; raises on anything it cannot resolve."""
    if isinstance(node, list):
        return [resolve(n, values) for n in node]
    if not isinstance(node, dict):
        return node
    if len(node) == 1:
        ((fn, arg),) = node.items()
        if fn == "Ref":
            return DEFAULT_PSEUDO[arg] if arg in DEFAULT_PSEUDO else values[arg]["Ref"]
        if fn == "Fn::GetAtt":
            lid, attr = arg if isinstance(arg, list) else arg.split(".", 1)
            return values[lid][attr]
        if fn == "Fn::Join":
            sep, parts = arg
            return str(sep).join(str(resolve(p, values)) for p in parts)
        if fn.startswith("Fn::"):
            raise ValueError(f"unsupported intrinsic {fn}")
    return {k: resolve(v, values) for k, v in node.items()}


def role_statements(template: dict[str, Any], role_prefix: str) -> list[dict[str, Any]]:
    """Every statement of the inline policies attached to the role `role_prefix*`."""
    resources = template["Resources"]
    (role_id,) = [
        k
        for k, v in resources.items()
        if v["Type"] == "AWS::IAM::Role" and k.startswith(role_prefix)
    ]
    docs = [p["PolicyDocument"] for p in resources[role_id]["Properties"].get("Policies", [])]
    for res in resources.values():
        props = res.get("Properties", {})
        if res["Type"] == "AWS::IAM::Policy" and {"Ref": role_id} in props.get("Roles", []):
            docs.append(props["PolicyDocument"])
    managed = resources[role_id]["Properties"].get("ManagedPolicyArns")
    assert not managed, f"{role_id} has managed policies this helper does not load: {managed}"
    return [s for doc in docs for s in doc["Statement"]]


def without_action(statements: list[dict[str, Any]], action: str) -> list[dict[str, Any]]:
    """The statements with every action pattern that grants `action` removed (`s3:Put*` too)."""
    out = []
    for stmt in statements:
        actions = stmt["Action"] if isinstance(stmt["Action"], list) else [stmt["Action"]]
        kept = [a for a in actions if not fnmatch.fnmatchcase(action.lower(), a.lower())]
        if kept:
            out.append({**stmt, "Action": kept})
    return out


def user_with_policy(iam: Any, statements: list[dict[str, Any]]) -> dict[str, str]:
    """A moto IAM user holding exactly `statements`; returns its AWS_* credential variables."""
    name = f"role-{uuid.uuid4().hex[:10]}"
    iam.create_user(UserName=name)
    document = {"Version": "2012-10-17", "Statement": statements}
    iam.put_user_policy(UserName=name, PolicyName="role", PolicyDocument=json.dumps(document))
    key = iam.create_access_key(UserName=name)["AccessKey"]
    return {
        "AWS_ACCESS_KEY_ID": key["AccessKeyId"],
        "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"],
    }
