"""Id validation, in one place, for every id that becomes part of a storage key or a name.

Session ids, agent ids, node and graph names, swarm ids and job ids all end up in paths or
S3 keys; each is checked here before any I/O happens.
"""

from __future__ import annotations

MAX_ID_LENGTH = 128


def validate_id(value: object, kind: str = "id") -> str:
    """Reject ids that could escape the layout or confuse it, before any I/O happens."""
    if not isinstance(value, str):
        raise ValueError(f"{kind} must be a string, got {type(value).__name__}")
    if not value:
        raise ValueError(f"{kind} must not be empty")
    if len(value) > MAX_ID_LENGTH:
        raise ValueError(f"{kind} is {len(value)} characters long; the limit is {MAX_ID_LENGTH}")
    if "/" in value or "\\" in value:
        raise ValueError(f"{kind} {value!r} must not contain path separators")
    if value in (".", "..") or ".." in value:
        raise ValueError(f"{kind} {value!r} must not contain '..'")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError(f"{kind} {value!r} must not contain control characters")
    return value
