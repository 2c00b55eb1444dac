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
    groups = parser.add_subparsers(dest="group", metavar="COMMAND")
    groups.required = True
    from elsai.cli import console, jobs, local, sessions

    sessions.register(groups)
    local.register(groups)
    jobs.register(groups)
    console.register(groups)
    parser.epilog = "\n".join(["every command:", *command_lines(groups)])
    return parser


def command_lines(groups: argparse._SubParsersAction[argparse.ArgumentParser]) -> list[str]:
    """One line per command (``elsai GROUP COMMAND  help``), for `elsai --help`."""
    lines = []
    for group in groups._choices_actions:
        sub = groups.choices[group.dest]
        commands = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
        if not commands:  # a command without subcommands (`elsai console`)
            name = f"elsai {group.dest}"
            lines.append(f"  {name:<24} {' '.join(str(group.help or '').split())}")
        for action in commands:
            for command in action._choices_actions:
                name = f"elsai {group.dest} {command.dest}"
                lines.append(f"  {name:<24} {' '.join(str(command.help or '').split())}")
    return lines


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
