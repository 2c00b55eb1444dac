"""`elsai local ...`: run a project's synthesized state machine offline, on moto."""

from elsai.cli.local.command import register

__all__ = ["register"]
