"""Validation of orchestrator limits, shared by GraphBuilder and Swarm."""

from __future__ import annotations


def positive_seconds(value: float | None, what: str) -> float | None:
    """A timeout: a positive number of seconds, or None for no limit."""
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, int | float) or value <= 0
    ):
        raise ValueError(f"{what} must be a positive number of seconds or None, got {value!r}")
    return value


def int_at_least(value: int, what: str, minimum: int = 1) -> int:
    """`value` if it is an int of at least `minimum`; a clear ValueError naming `what` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{what} must be an int >= {minimum}, got {value!r}")
    return value
