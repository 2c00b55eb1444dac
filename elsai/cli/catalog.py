"""The `elsai` command tree with each command's one-line help, for `elsai --help`'s list.

argparse keeps the help it shows beside each subcommand in private attributes; the CLI records
it here as command groups register, so the list of every command is built from public calls.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any


@dataclass
class _Entry:
    name: str
    help: str
    commands: Commands | None = None  # its subcommands, if it has any


@dataclass
class Commands:
    """A level of subcommands (`elsai`, `elsai jobs`, ...) that remembers what it adds."""

    action: Any  # what `ArgumentParser.add_subparsers` returned
    prefix: str = "elsai"
    entries: list[_Entry] = field(default_factory=list)

    @property
    def required(self) -> bool:
        """Whether a subcommand must be given."""
        return bool(self.action.required)

    @required.setter
    def required(self, value: bool) -> None:
        self.action.required = value

    def add_parser(self, name: str, *, help: str, **kwargs: Any) -> argparse.ArgumentParser:  # noqa: A002
        """Add the command `name` (with its one-line `help`) and return its parser."""
        self.entries.append(_Entry(f"{self.prefix} {name}", help))
        parser: argparse.ArgumentParser = self.action.add_parser(name, help=help, **kwargs)
        return parser

    def subcommands(self, parser: argparse.ArgumentParser, name: str, **kwargs: Any) -> Commands:
        """The subcommands of `name`, a command this level added with `parser`."""
        entry = next(e for e in self.entries if e.name == f"{self.prefix} {name}")
        entry.commands = Commands(parser.add_subparsers(**kwargs), entry.name)
        return entry.commands

    def lines(self) -> list[str]:
        """One line per command without subcommands (``elsai GROUP COMMAND  help``), in order."""
        out: list[str] = []
        for entry in self.entries:
            if entry.commands is not None:
                out.extend(entry.commands.lines())
            else:
                out.append(f"  {entry.name:<24} {' '.join(entry.help.split())}")
        return out
