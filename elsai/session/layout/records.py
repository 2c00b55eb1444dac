"""Persisted records (pydantic) and their JSON encoding.

Message content may hold raw bytes (images, documents); JSON cannot, so bytes are stored as
`{"__bytes__": "<base64>"}` and restored on read. The encoding is unambiguous: a dict of the
data itself whose only key is a marker (`__bytes__`, or the escape `__elsai_dict__`) is stored
escaped, as `{"__elsai_dict__": [key, value]}`, so tool results or state can never pass for
bytes. Stores written before the escape existed still load: there a marker dict whose value is
not valid base64 can only be data, and stays a dict.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticSerializationError, to_json

from elsai.errors import ElsaiError
from elsai.types import Message

SESSION_SCHEMA_VERSION = "1.0"
T = TypeVar("T", bound=BaseModel)


class SessionCorruptError(ElsaiError):
    """A session file is unreadable or does not match its schema."""


class SessionRecord(BaseModel):
    """session.json: the session's id and creation time."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="allow")
    session_id: str
    schema_version: str = SESSION_SCHEMA_VERSION
    created_at: str
    session_type: str = "agent"


class AgentRecord(BaseModel):
    """agent.json: agent state and what is needed to rebuild the same conversation window."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="allow")
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

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="allow")
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


class ResumeRecord(BaseModel):
    """resumes/resume_<stamp>_<tag>.json: an invocation resumed from the bookmark.

    The bookmark is overwritten as the run goes on, so without this nothing would say, once
    the run completes, that (and where) it recovered from a crash.
    """

    # Its validator is built when needed: only a resume writes one.
    model_config: ClassVar[ConfigDict] = ConfigDict(extra="allow", defer_build=True)
    schema_version: str = SESSION_SCHEMA_VERSION
    position: str
    cycle_index: int = Field(ge=0)
    #: Stored messages when the resume began: it continues after message `message_count - 1`.
    message_count: int = Field(ge=0)
    resumed_at: str
    invocation_id: str | None = None


#: The stored form of bytes, and the escape of a data dict that would read as a marker.
BYTES_KEY, ESCAPE_KEY = "__bytes__", "__elsai_dict__"
_MARKERS = frozenset({BYTES_KEY, ESCAPE_KEY})


def encode_value(value: Any) -> Any:
    """`value` made JSON-ready: bytes as base64 markers, marker-shaped dicts escaped."""
    if isinstance(value, bytes | bytearray):
        return {BYTES_KEY: base64.b64encode(bytes(value)).decode()}
    if isinstance(value, dict):
        encoded = {k: encode_value(v) for k, v in value.items()}
        if len(encoded) == 1:
            ((key, item),) = encoded.items()
            if key in _MARKERS:
                return {ESCAPE_KEY: [key, item]}
        return encoded
    if isinstance(value, list | tuple):
        return [encode_value(v) for v in value]
    return value


def _decode_hook(obj: dict[str, Any]) -> Any:
    """One stored JSON object as data (`json.loads` calls it innermost first)."""
    if len(obj) != 1:
        return obj
    ((key, item),) = obj.items()
    if key == BYTES_KEY and isinstance(item, str):
        try:
            return base64.b64decode(item, validate=True)
        except (binascii.Error, ValueError):
            return obj  # only an older store holds this unescaped: it is data
    if key == ESCAPE_KEY and isinstance(item, list) and len(item) == 2 and isinstance(item[0], str):
        return {item[0]: item[1]}
    return obj


def decode_value(value: Any) -> Any:
    """The inverse of `encode_value` for JSON already parsed without `parse_json`."""
    if isinstance(value, dict):
        return _decode_hook({k: decode_value(v) for k, v in value.items()})
    if isinstance(value, list):
        return [decode_value(v) for v in value]
    return value


def _unknown_type(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


def dump(record: BaseModel) -> bytes:
    """A record as the JSON bytes stored for it (bytes values survive as base64).

    Plain JSON data (every message a model or tool produces) is written by pydantic-core's
    encoder, several times faster than the standard library's indented one; non-ASCII text
    is stored as UTF-8 there, not as escapes. Anything else takes the standard library's way,
    so what JSON has no form for fails just as before and lone surrogates are escaped.
    """
    raw = record.model_dump(mode="python")
    plain = _plain_json(raw, True)  # the common case: nothing to encode, one walk
    encoded = raw if plain else encode_value(raw)
    if plain or _plain_json(encoded, False):
        try:
            return to_json(encoded, indent=1, inf_nan_mode="constants")
        except PydanticSerializationError:
            pass  # a lone surrogate: UTF-8 has no form for it
    return json.dumps(encoded, default=_unknown_type, indent=1).encode()


def _plain_json(value: Any, unmarked: bool) -> bool:
    """Whether `value` holds only JSON's own types (exactly: no subclasses, str keys).

    With `unmarked`, also whether `encode_value` would leave it as it is: no one-key dict
    whose key reads as a marker (bytes are not JSON's own type either).
    """
    kind = type(value)
    if kind is dict:
        if unmarked and len(value) == 1 and next(iter(value)) in _MARKERS:
            return False
        return all(type(k) is str and _plain_json(v, unmarked) for k, v in value.items())
    if kind is list:
        return all(_plain_json(v, unmarked) for v in value)
    return kind is str or kind is int or kind is float or kind is bool or value is None


def parse_json(data: bytes) -> Any:
    """Stored JSON as `load` reads it (bytes values decoded), for containers of records."""
    return json.loads(data, object_hook=_decode_hook)


def load(cls: type[T], data: bytes, where: str) -> T:
    """Parse a stored record; anything wrong raises SessionCorruptError naming `where`."""
    try:
        return cls.model_validate(json.loads(data, object_hook=_decode_hook))
    except (ValueError, ValidationError) as exc:
        raise SessionCorruptError(f"corrupt session file {where}: {exc}") from exc
