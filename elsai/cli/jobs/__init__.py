"""`elsai jobs ...`: start, follow, answer and cancel jobs over the jobs API; `serve` runs it locally."""

from elsai.cli.jobs.command import register

__all__ = ["register"]
