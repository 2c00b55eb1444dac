"""API Gateway request models from the handler's own pydantic models: one source, never stricter.

The gate in front of the jobs API Lambda checks a request body against the JSON Schema of the
model the handler validates it with (`elsai.serverless.contract.jobs_api`), coarsened where
a gateway refusal would say less than the handler's 400 or where the schema says more than
validation does:

- ``enum`` and ``additionalProperties`` are left to the handler, whose message names the
  accepted values and the unknown field (API Gateway's says "Invalid request body");
- ``oneOf`` becomes ``anyOf``: the handler reads `id` when a body has both `id` and
  `interruptId`, so "exactly one" would refuse what it accepts;
- titles, descriptions, defaults and ``deprecated`` are documentation, not checks.

What stays (types, required fields, lengths, patterns, item counts, inclusive ranges) is what
the model checks too, so a body the handler accepts always passes. API Gateway speaks draft 4:
references are inlined. The plain form (`gateway_schema`) is what the tests check with
jsonschema; `to_cdk` makes the typed `JsonSchema` the construct needs.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_apigateway as apigw
from pydantic import BaseModel

#: Keywords kept as they are (all checks pydantic makes as well).
#: (Not pydantic's numeric ``exclusiveMinimum``: draft 4 spells that as a boolean.)
_KEPT = ("type", "required", "minLength", "maxLength", "pattern", "minItems", "maxItems",
         "minimum", "maximum")  # fmt: skip
_CDK_NAMES = {"minLength": "min_length", "maxLength": "max_length", "minItems": "min_items",
              "maxItems": "max_items"}  # fmt: skip
_TYPES = {
    "string": apigw.JsonSchemaType.STRING, "integer": apigw.JsonSchemaType.INTEGER,
    "number": apigw.JsonSchemaType.NUMBER, "boolean": apigw.JsonSchemaType.BOOLEAN,
    "object": apigw.JsonSchemaType.OBJECT, "array": apigw.JsonSchemaType.ARRAY,
    "null": apigw.JsonSchemaType.NULL,
}  # fmt: skip


def gateway_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The draft-4 JSON Schema the gateway checks a `model` body with (see the module)."""
    schema = model.model_json_schema()
    return _coarse(schema, schema.get("$defs", {}))


def _coarse(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    out = {k: schema[k] for k in _KEPT if k in schema}
    if "properties" in schema:
        out["properties"] = {k: _coarse(v, defs) for k, v in schema["properties"].items()}
    if "items" in schema:
        out["items"] = _coarse(schema["items"], defs)
    choices = [*schema.get("anyOf", []), *schema.get("oneOf", [])]
    if choices:
        out["anyOf"] = [_coarse(choice, defs) for choice in choices]
    return out


def to_cdk(schema: dict[str, Any], *, top: bool = True) -> apigw.JsonSchema:
    """`schema` (from `gateway_schema`) as CDK's typed JsonSchema ($schema on the root only)."""
    kwargs: dict[str, Any] = {_CDK_NAMES.get(k, k): v for k, v in schema.items() if k in _KEPT}
    if "type" in schema:
        kwargs["type"] = _TYPES[schema["type"]]
    if "properties" in schema:
        kwargs["properties"] = {k: to_cdk(v, top=False) for k, v in schema["properties"].items()}
    if "items" in schema:
        kwargs["items"] = to_cdk(schema["items"], top=False)
    if "anyOf" in schema:
        kwargs["any_of"] = [to_cdk(choice, top=False) for choice in schema["anyOf"]]
    version = apigw.JsonSchemaVersion.DRAFT4 if top else None
    return apigw.JsonSchema(schema=version, **kwargs)
