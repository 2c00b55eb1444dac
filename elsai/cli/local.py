"""`elsai local ...` (placeholder: filled in by the serverless work)."""

from __future__ import annotations

from typing import Any


def register(groups: Any) -> None:
    parser = groups.add_parser("local", help="run jobs through the synthesized state machine on moto")
    parser.set_defaults(handler=lambda args: parser.print_help())
