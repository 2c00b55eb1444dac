"""The request bodies of the jobs API, bounded by `elsai.serverless.limits`.

The handler parses each body with its model, the API Gateway request models are made from
them (`elsai.cdk.gateway_models`) and the OpenAPI document shows their JSON Schemas; the rows
that take them are in `elsai.serverless.contract.jobs_api`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from elsai.ids import validate_id
from elsai.serverless import limits
from elsai.serverless.contract import VERSION_POLICIES

IdStr = Annotated[
    str, Field(min_length=1, max_length=limits.MAX_ID_LENGTH, pattern=limits.SAFE_ID_PATTERN)
]

# -- request bodies --------------------------------------------------------------------------


class StartJob(BaseModel):
    """Body of POST /jobs."""

    model_config = ConfigDict(extra="forbid")
    prompt: str = Field(min_length=1, max_length=limits.MAX_PROMPT_CHARS)
    session_id: IdStr | None = None
    agent_id: IdStr = "agent"
    #: "pinned" (default): the job runs on the version it started on until upgraded;
    #: "upgrade_on_resume": each resume after a wait for input moves it to the current version.
    #: The schema names the accepted values; the validator's message names them too.
    version_policy: str = Field(
        default="pinned", max_length=64, json_schema_extra={"enum": list(VERSION_POLICIES)}
    )

    @field_validator("version_policy")
    @classmethod
    def _policy(cls, value: str) -> str:
        if value not in VERSION_POLICIES:
            accepted = ", ".join(repr(p) for p in VERSION_POLICIES)
            raise ValueError(f"version_policy must be one of {accepted}, not {value[:64]!r}")
        return value

    @field_validator("session_id")
    @classmethod
    def _session_id(cls, value: str | None) -> str | None:
        # The storage layout's own rules on top of the pattern (e.g. no ".."); a ValueError
        # here becomes a 400 like any other validation error.
        return None if value is None else validate_id(value, "session_id")

    @field_validator("agent_id")
    @classmethod
    def _agent_id(cls, value: str) -> str:
        validate_id(value, "agent_id")
        return value


def _either_id(schema: dict[str, Any]) -> None:
    """The JSON Schema says what validation does: `id` or the older `interruptId`, not both."""
    properties = schema["properties"]
    properties["interruptId"] = {**properties["id"], "title": "Interruptid", "deprecated": True}
    schema["required"] = ["response"]
    schema["oneOf"] = [{"required": ["id"]}, {"required": ["interruptId"]}]


class InterruptResponse(BaseModel):
    """One answer: the Converse-style ``interruptResponse`` content."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_either_id)
    # `id`, as GET shows it (one name in GET and POST); `interruptId` is still accepted.
    interruptId: str = Field(  # noqa: N815 - Converse-style field name
        min_length=1,
        max_length=limits.MAX_INTERRUPT_ID_CHARS,
        validation_alias=AliasChoices("id", "interruptId"),
    )
    response: Any


class AnswerJob(BaseModel):
    """Body of POST /jobs/{job_id}/responses."""

    model_config = ConfigDict(extra="forbid")
    responses: list[InterruptResponse] = Field(
        min_length=1, max_length=limits.MAX_INTERRUPT_RESPONSES
    )


__all__ = ["AnswerJob", "InterruptResponse", "StartJob"]
