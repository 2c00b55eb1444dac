"""The `elsai` command. Each subcommand group lives in its own module and registers itself."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    """The `elsai` argument parser; command groups register themselves so each stays in its module."""
    parser = argparse.ArgumentParser(
        prog="elsai",
        description="Durable agents: inspect sessions, run jobs locally.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from elsai import __version__

    parser.add_argument("--version", action="version", version=f"elsai {__version__}")
    from elsai.cli.catalog import Commands

    groups = Commands(parser.add_subparsers(dest="group", metavar="COMMAND"))
    groups.required = True
    from elsai.cli import console, jobs, local, sessions

    sessions.register(groups)
    local.register(groups)
    jobs.register(groups)
    console.register(groups)
    parser.epilog = "\n".join(["every command:", *groups.lines()])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI: one clear line on stderr and a non-zero exit code on failure, no traceback."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # one clear line, non-zero exit; tracebacks are for bugs
        print(f"elsai: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
