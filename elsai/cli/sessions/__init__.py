"""`elsai sessions ...`: list, show, check and tail stored sessions (files or S3)."""

from elsai.cli.sessions.command import register

__all__ = ["register"]
