"""Persisted records (pydantic) and their JSON encoding.

Message content may hold raw bytes (images, documents); JSON cannot, so bytes are stored as
`{"__bytes__": "<base64>"}` and restored on read.
"""

from __future__ import annotations

import base64
import json
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from elsai.errors import ElsaiError
from elsai.types import Message

SESSION_SCHEMA_VERSION = "1.0"
T = TypeVar("T", bound=BaseModel)


class SessionCorruptError(ElsaiError):
    """A session file is unreadable or does not match its schema."""


class SessionRecord(BaseModel):
    """session.json: the session's id and creation time."""

    model_config = ConfigDict(extra="allow")
    session_id: str
    schema_version: str = SESSION_SCHEMA_VERSION
    created_at: str
    session_type: str = "agent"


class AgentRecord(BaseModel):
    """agent.json: agent state and what is needed to rebuild the same conversation window."""

    model_config = ConfigDict(extra="allow")
    agent_id: str
    schema_version: str = SESSION_SCHEMA_VERSION
    created_at: str
    updated_at: str
    state: dict[str, Any] = Field(default_factory=dict)
    conversation_manager_state: dict[str, Any] = Field(default_factory=dict)
    #: Recent invocation ids whose input is recorded (exactly-once prompts); newest last.
    invocation_ids: list[str] = Field(default_factory=list)
    interrupt_state: dict[str, Any] = Field(default_factory=dict)
    #: Stored messages when this record was written: a hint that spares a LIST on load.
    message_count: int = 0


class MessageRecord(BaseModel):
    """messages/message_<N>.json: one Converse message plus bookkeeping."""

    model_config = ConfigDict(extra="allow")
    message_id: int
    created_at: str
    message: dict[str, Any]
    #: Invocations whose input this message carries (a merge can add a second one).
    invocation_ids: list[str] = Field(default_factory=list)

    @property
    def invocation_id(self) -> str | None:
        """The first invocation recorded in this message (kept for readers of one id)."""
        return self.invocation_ids[0] if self.invocation_ids else None

    def as_message(self) -> Message:
        """The stored message in the Converse shape."""
        return self.message  # type: ignore[return-value]


def _encode_default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return {"__bytes__": base64.b64encode(bytes(value)).decode()}
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def _decode_hook(obj: dict[str, Any]) -> Any:
    if len(obj) == 1 and "__bytes__" in obj:
        return base64.b64decode(obj["__bytes__"])
    return obj


def dump(record: BaseModel) -> bytes:
    """A record as the JSON bytes stored for it (bytes values survive as base64)."""
    return json.dumps(record.model_dump(mode="python"), default=_encode_default, indent=1).encode()


def parse_json(data: bytes) -> Any:
    """Stored JSON as `load` reads it (bytes values decoded), for containers of records."""
    return json.loads(data, object_hook=_decode_hook)


def load(cls: type[T], data: bytes, where: str) -> T:
    """Parse a stored record; anything wrong raises SessionCorruptError naming `where`."""
    try:
        return cls.model_validate(json.loads(data, object_hook=_decode_hook))
    except (ValueError, ValidationError) as exc:
        raise SessionCorruptError(f"corrupt session file {where}: {exc}") from exc
