"""`elsai sessions ...` (placeholder: filled in by the inspection work)."""

from __future__ import annotations

import argparse
from typing import Any


def register(groups: Any) -> None:
    parser = groups.add_parser("sessions", help="inspect stored sessions")
    parser.set_defaults(handler=lambda args: parser.print_help())


__all__ = ["register", "argparse"]
