"""The one check of a stored record's `schema_version`, shared by every record that pins one.

Records call it from a pydantic field validator, so the ValueError surfaces as that record's
own error (CheckpointException for checkpoint.json, SessionCorruptError for multi_agent.json).
"""

from __future__ import annotations


def require_schema_version(value: str, supported: str) -> str:
    """`value` if it is the version this SDK writes; a ValueError naming both otherwise."""
    if value != supported:
        raise ValueError(
            f"schema_version {value!r} is not supported (this SDK writes {supported!r})"
        )
    return value
