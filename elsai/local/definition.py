"""A synthesized template's state machine as plain ASL, to create the same machine in moto.

The template's ``DefinitionString`` is an ``Fn::Join`` with ``GetAtt``/``Ref`` parts; this
resolves it for a given set of function ARNs and refuses anything it cannot resolve.
"""

from __future__ import annotations

import json
from typing import Any

DEFAULT_PSEUDO = {
    "AWS::Partition": "aws",
    "AWS::Region": "us-east-1",
    "AWS::AccountId": "123456789012",
    "AWS::URLSuffix": "amazonaws.com",
}


def state_machine_logical_id(template: dict[str, Any]) -> str:
    """Logical id of the (single) state machine in ``template``."""
    ids = [
        k
        for k, v in template["Resources"].items()
        if v["Type"] == "AWS::StepFunctions::StateMachine"
    ]
    if len(ids) != 1:
        raise ValueError(f"expected one state machine, found {ids}")
    return ids[0]


def function_logical_ids(template: dict[str, Any]) -> list[str]:
    """Logical ids of the Lambda functions (``AgentFunction...``, ``ApiFunction...``)."""
    return [k for k, v in template["Resources"].items() if v["Type"] == "AWS::Lambda::Function"]


def state_machine_definition(
    template: dict[str, Any],
    function_arns: dict[str, str],
    *,
    pseudo: dict[str, str] | None = None,
    version: str = "1",
) -> dict[str, Any]:
    """Concrete ASL for the template's state machine.

    ``function_arns`` maps a part of a logical id (e.g. ``"AgentFunction"``) to the ARN to
    put in place of that function's ``GetAtt .Arn``/``Ref``. Raises ``ValueError`` on
    any reference it cannot resolve, so callers never get half-resolved ASL. A published
    version (``AWS::Lambda::Version``, what jobs are pinned to) resolves to its function's ARN
    qualified by ``version``: the version the caller published for this deploy.
    """
    resources = template["Resources"]
    pseudo_values = {**DEFAULT_PSEUDO, **(pseudo or {})}

    def function_arn(logical_id: str) -> str:
        resource = resources.get(logical_id, {})
        if resource.get("Type") == "AWS::Lambda::Alias":  # SnapStart: the machine calls an alias
            props = resource["Properties"]
            return f"{resolve(props['FunctionName'])}:{props['Name']}"
        if resource.get("Type") == "AWS::Lambda::Version":
            return f"{resolve(resource['Properties']['FunctionName'])}:{version}"
        if resource.get("Type") != "AWS::Lambda::Function":
            raise ValueError(f"reference to non-function resource {logical_id!r}")
        matches = [arn for part, arn in function_arns.items() if part in logical_id]
        if len(matches) != 1:
            raise ValueError(f"no single ARN for {logical_id!r} in {sorted(function_arns)}")
        return matches[0]

    def resolve(node: Any) -> str:
        if isinstance(node, str):
            return node
        if isinstance(node, dict) and len(node) == 1:
            ((fn, arg),) = node.items()
            if fn == "Fn::Join":
                sep, parts = arg
                return str(sep).join(resolve(p) for p in parts)
            if fn == "Ref":
                if arg in pseudo_values:
                    return pseudo_values[arg]
                return function_arn(arg)  # Ref of a function is its name; ARN works for Invoke
            if fn == "Fn::GetAtt":
                logical_id, attr = arg if isinstance(arg, list) else arg.split(".", 1)
                if attr != "Arn":
                    raise ValueError(f"unsupported GetAtt {logical_id}.{attr}")
                return function_arn(logical_id)
        raise ValueError(f"unresolvable intrinsic in DefinitionString: {node!r}")

    props = resources[state_machine_logical_id(template)]["Properties"]
    if "DefinitionSubstitutions" in props:
        raise ValueError("DefinitionSubstitutions are not supported")
    definition = json.loads(resolve(props["DefinitionString"]))
    if not isinstance(definition, dict):
        raise ValueError("DefinitionString is not a JSON object")
    return definition
