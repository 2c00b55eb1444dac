"""Checkpoint: the persisted bookmark record (checkpoint.json)."""

from __future__ import annotations

import re
import time
from datetime import datetime
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from elsai.errors import ElsaiError
from elsai.schema import require_schema_version
from elsai.types import Position

SCHEMA_VERSION = "1.0"


class CheckpointException(ElsaiError):
    """checkpoint.json is corrupt, has the wrong schema, or could not be handled."""


class Checkpoint(BaseModel):
    """A thin bookmark: where the agent last completed a loop boundary. No message content."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid", frozen=True)

    position: Position
    cycle_index: int = Field(ge=0)
    schema_version: str = SCHEMA_VERSION
    created_at: str
    message_count: int = Field(ge=0)
    agent_id: str
    execution_status: Literal["active", "completed"] = "active"

    @field_validator("schema_version")
    @classmethod
    def _known_schema(cls, value: str) -> str:
        return require_schema_version(value, SCHEMA_VERSION)

    @field_validator("created_at")
    @classmethod
    def _iso_utc(cls, value: str) -> str:
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise ValueError(f"created_at {value!r} is not an ISO-8601 timestamp") from exc
        return value

    @property
    def is_active(self) -> bool:
        """True if a resume should act on this bookmark (not yet finalized)."""
        return self.execution_status == "active"

    def to_json(self) -> bytes:
        """The bytes of checkpoint.json."""
        return self.model_dump_json(indent=2).encode()

    @classmethod
    def from_json(cls, data: bytes, where: str) -> Checkpoint:
        """Parse checkpoint.json; anything wrong raises CheckpointException naming the file."""
        try:
            return cls.model_validate_json(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'file'}: {e['msg']}" for e in exc.errors()
            )
            raise CheckpointException(
                f"invalid checkpoint file {where}: {problems}. {_repair_hint(where)}"
            ) from None


def _repair_hint(where: str) -> str:
    """What to do about a bad bookmark: look first, then the one repair that loses nothing."""
    match = re.search(r"session_([^/\\]+)[/\\]agents[/\\]agent_", where)
    session = match.group(1) if match else "<session_id>"
    return (
        f"Run `elsai sessions check {session}` to see every problem. Safe repair: move "
        "checkpoint.json aside (do not edit the messages); the next invoke then continues from "
        "the stored messages only, and a pending tool call is answered as interrupted."
    )


def utc_now() -> str:
    """ISO-8601 UTC with a Z suffix, as the spec's example shows (`time`: no datetime object)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
