"""`elsai sessions ls|show|tail|check|redact`: look at what durable agents did, locally or on S3.

Read-only by design, except `redact` (elsai.cli.sessions.redact), which rewrites one message on
request: the others never repair or rewrite a store, so they are safe to point at a live job.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from elsai.cli.catalog import Commands
from elsai.cli.render import (
    Style,
    bookmark_line,
    bookmark_short,
    compact,
    next_line,
    problem_line,
    render_message,
    table,
    to_json,
    write,
)
from elsai.cli.sessions.listing import ls_entry, only_agent
from elsai.cli.sessions.redact import add_arguments as redact_arguments
from elsai.cli.sessions.redact import run as redact_run
from elsai.cli.sessions.store import CliError, Store, open_store
from elsai.errors import ElsaiError
from elsai.session.inspect.check import (
    AgentSnapshot,
    SessionSnapshot,
    check_snapshot,
    load_session,
    next_invoke,
)

Handler = Callable[[argparse.Namespace, Store, Style], int]


def register(groups: Commands) -> None:
    """Add `elsai sessions ...` (ls, show, check, tail, redact) to the CLI."""
    parser = groups.add_parser(
        "sessions",
        help="inspect stored sessions (local directory or S3)",
        description="Inspect sessions and checkpoints written by FileSessionManager / S3SessionManager.",
    )
    _common(parser, suppress=False)
    commands = groups.subcommands(parser, "sessions", dest="command", metavar="COMMAND")
    commands.required = True

    ls = _command(
        commands, "ls", "sessions with agents, message counts, bookmarks, last update", _ls
    )
    del ls
    show = _command(
        commands,
        "show",
        "a session's transcript, bookmark and what the next invoke would do",
        _show,
    )
    show.add_argument("session", help="session id")
    show.add_argument("--agent", metavar="ID", help="only this agent")
    show.add_argument("--last", metavar="N", type=_count, help="only the last N messages")
    show.add_argument("--full", action="store_true", help="do not clip long text to the terminal")
    tail = _command(commands, "tail", "follow a live session as messages and bookmarks land", _tail)
    tail.add_argument("session", help="session id")
    tail.add_argument("--agent", metavar="ID", help="only this agent")
    tail.add_argument(
        "--last",
        metavar="N",
        type=_count,
        default=5,
        help="stored messages to show first (default 5)",
    )
    tail.add_argument(
        "--interval", metavar="S", type=_seconds, default=1.0, help="poll interval (default 1s)"
    )
    tail.add_argument("--timeout", metavar="S", type=_seconds, help="stop after S seconds (exit 0)")
    tail.add_argument(
        "--until-complete",
        action="store_true",
        help="exit 0 once a bookmark is written as completed",
    )
    tail.add_argument(
        "--wait", action="store_true", help="wait for the session to appear instead of failing"
    )
    tail.add_argument("--full", action="store_true", help="do not clip long text to the terminal")
    check = _command(commands, "check", "validate layout, schema and transcript shape", _check)
    check.add_argument("session", help="session id")
    check.add_argument("--agent", metavar="ID", help="only this agent (and session-level files)")
    redact_arguments(
        _command(commands, "redact", "replace a stored message's text (and its copies)", redact_run)
    )


def _common(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    """Store and output options, accepted before or after the subcommand."""
    default: Any = argparse.SUPPRESS if suppress else None
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--storage-dir",
        metavar="DIR",
        default=default,
        help="local session store (default ./sessions)",
    )
    where.add_argument(
        "--s3", metavar="s3://BUCKET/PREFIX", default=default, help="session store in S3"
    )
    flag: Any = argparse.SUPPRESS if suppress else False
    parser.add_argument("--json", action="store_true", default=flag, help="machine-readable output")
    parser.add_argument(
        "--no-color", action="store_true", default=flag, help="never colour (also: NO_COLOR env)"
    )


def _command(commands: Any, name: str, help_text: str, handler: Handler) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name, help=help_text, description=help_text
    )
    _common(parser, suppress=True)
    parser.set_defaults(handler=lambda args: _run(handler, args))
    return parser


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be more than 0")
    return value


def _run(handler: Handler, args: argparse.Namespace) -> int:
    """Every failure is one line on stderr and a non-zero exit; Ctrl-C is left to `elsai.cli`."""
    try:
        store = open_store(args.storage_dir, args.s3)
        style = Style.for_stream(
            sys.stdout, no_color=args.no_color, full=getattr(args, "full", False)
        )
        return handler(args, store, style)
    except CliError as exc:
        print(f"elsai: {exc}", file=sys.stderr)
        return exc.exit_code
    except (ElsaiError, ValueError, OSError) as exc:
        if isinstance(exc, BrokenPipeError):  # `elsai sessions show x | head`: the reader left
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        print(f"elsai: error: {exc}", file=sys.stderr)
        return 1


# -- ls ------------------------------------------------------------------------------------------


def _ls(args: argparse.Namespace, store: Store, style: Style) -> int:
    by_session: dict[str, dict[str, float]] = {}
    for key, ts in store.times("session_").items():
        top, slash, _ = key.partition("/")
        if slash and top.startswith("session_"):
            by_session.setdefault(top.removeprefix("session_"), {})[key] = ts
    entries = [ls_entry(store.storage, sid, files) for sid, files in by_session.items()]
    entries.sort(key=lambda e: e["updated_ts"], reverse=True)
    if args.json:
        print(to_json([{k: v for k, v in e.items() if k != "updated_ts"} for e in entries]))
        return 0
    if not entries:
        print(f"no sessions in {store.location}")
        return 0
    rows: list[list[str]] = []
    for e in entries:
        if "error" in e:
            rows.append([e["session_id"], "!", "", "", e["updated_at"], e["error"]])
        for a in e.get("agents", []):
            cp = a["checkpoint"] if isinstance(a["checkpoint"], dict) else None
            nxt = (
                f"awaiting {a['interrupts_pending']} interrupt response(s)"
                if a["interrupts_pending"]
                else a["next_invoke"]
            )
            rows.append(
                [
                    e["session_id"],
                    a["agent_id"],
                    str(a["message_count"]),
                    "unreadable" if a["checkpoint"] == "unreadable" else bookmark_short(cp),
                    a["updated_at"],
                    nxt,
                ]
            )
        if not e.get("agents") and "error" not in e:
            rows.append([e["session_id"], "-", "0", "-", e["updated_at"], "-"])
    write(table(rows, style, ["SESSION", "AGENT", "MSGS", "BOOKMARK", "UPDATED", "NEXT INVOKE"]))
    return 0


# -- show ----------------------------------------------------------------------------------------


def _snapshot(args: argparse.Namespace, store: Store, **kwargs: Any) -> SessionSnapshot:
    store.require_session(args.session)
    snap = load_session(store.storage, args.session, **kwargs)
    if snap is None:
        raise CliError(f"no session {args.session} in {store.location}", 2)
    if getattr(args, "agent", None) and args.agent not in snap.agents:
        raise CliError(f"no agent {args.agent} in session {args.session} ({store.location})", 2)
    return snap


def agent_json(agent: AgentSnapshot) -> dict[str, Any]:
    """One agent as JSON (`--json`): messages, bookmark, interrupts and the next invoke."""
    decision = next_invoke(agent)
    return {
        "agent_id": agent.agent_id,
        "message_count": len(agent.indices),
        "messages": [
            {
                "index": i,
                "created_at": r.created_at,
                "invocation_id": r.invocation_id,
                "message": r.message,
            }
            for i, r in sorted(agent.messages.items())
        ],
        "checkpoint": agent.bookmark.model_dump() if agent.bookmark else None,
        "interrupt_state": agent.record.interrupt_state if agent.record else None,
        "next_invoke": {
            "action": decision.action,
            "summary": decision.summary,
            "pending_tools": list(decision.pending_tools),
            "denial": decision.denial,
        },
    }


def _show(args: argparse.Namespace, store: Store, style: Style) -> int:
    snap = _snapshot(args, store, agent_id=args.agent, last=args.last)
    agents = [a for a in snap.agents.values() if args.agent in (None, a.agent_id)]
    if args.json:
        print(
            to_json(
                {
                    "session_id": snap.session_id,
                    "location": store.location,
                    "session": snap.record.model_dump() if snap.record else None,
                    "multi_agent": snap.multi_agent,
                    "problems": [p.__dict__ for p in snap.problems],
                    "agents": [agent_json(a) for a in agents],
                }
            )
        )
        return 0
    created = f" · created {snap.record.created_at}" if snap.record else ""
    lines = [
        style.paint(f"session {snap.session_id}", "bold")
        + style.paint(f" · {store.location}{created}", "dim")
    ]
    if snap.multi_agent is not None:
        lines.append(style.clip(f"orchestrator  {compact(snap.multi_agent)}"))
    if snap.problems:
        lines.append(
            style.paint(
                f"{len(snap.problems)} problem(s) reading this session; run `elsai sessions check {snap.session_id}`",
                "red",
            )
        )
    for agent in agents:
        lines += ["", *agent_lines(agent, style, args.last)]
    write(lines)
    return 0


def agent_lines(agent: AgentSnapshot, style: Style, last: int | None = None) -> list[str]:
    """One agent of a snapshot for a person: header, newest messages, bookmark, next invoke."""
    count = len(agent.indices)
    lines = [
        style.paint(f"agent {agent.agent_id}", "bold", "magenta")
        + style.paint(f" · {count} message(s)", "dim")
    ]
    shown = agent.indices if last is None else agent.indices[count - min(last, count) :]
    if count > len(shown):
        lines.append(style.paint(f"  … {count - len(shown)} earlier message(s)", "dim"))
    expected = shown[0] if shown and count > len(shown) else 0
    for index in shown:
        if index > expected:  # a gap in the numbering: say so where it is
            span = f"{expected}..{index - 1}" if index - 1 > expected else str(expected)
            lines.append(style.paint(f"[{span}] missing (see `elsai sessions check`)", "red"))
        expected = index + 1
        record = agent.messages.get(index)
        if record is None:
            lines.append(style.paint(f"[{index}] unreadable (see `elsai sessions check`)", "red"))
        else:
            lines += render_message(index, record.message, style, created_at=record.created_at)
    lines.append("")
    bookmark = bookmark_line(agent.bookmark)
    if any(k.endswith("/checkpoint.json") for k in agent.unreadable):
        bookmark = style.paint("checkpoint.json is unreadable (see `elsai sessions check`)", "red")
    lines.append(f"{style.paint('bookmark     ', 'bold')}{bookmark}")
    for item in agent.pending_interrupts:
        reason = compact(item.get("reason"))
        lines.append(
            style.clip(
                f"{style.paint('interrupt    ', 'bold')}pending {item.get('name')} ({item.get('id')}) reason {reason}"
            )
        )
    lines.append(f"{style.paint('next invoke  ', 'bold')}{next_line(next_invoke(agent), style)}")
    return lines


# -- check ---------------------------------------------------------------------------------------


def _check(args: argparse.Namespace, store: Store, style: Style) -> int:
    snap = _snapshot(args, store)
    if args.agent:
        snap = only_agent(snap, args.agent)
    problems = check_snapshot(store.storage, snap)
    errors = sum(p.severity == "error" for p in problems)
    warnings = len(problems) - errors
    messages = sum(len(a.indices) for a in snap.agents.values())
    if args.json:
        agents = [
            {
                "agent_id": a.agent_id,
                "message_count": len(a.indices),
                "next_invoke": next_invoke(a).summary,
            }
            for a in snap.agents.values()
        ]
        report = {
            "session_id": snap.session_id,
            "ok": errors == 0,
            "errors": errors,
            "warnings": warnings,
        }
        print(to_json({**report, "problems": [p.__dict__ for p in problems], "agents": agents}))
        return 1 if errors else 0
    lines = [problem_line(p, style) for p in problems]
    what = f"session {snap.session_id}: {len(snap.agents)} agent(s), {messages} message(s)"
    if errors:
        lines.append(
            style.paint(f"FAILED  {what}; {errors} error(s), {warnings} warning(s)", "red", "bold")
        )
    else:
        lines.append(
            style.paint("ok", "green", "bold")
            + f"  {what}"
            + (f"; {warnings} warning(s)" if warnings else "")
        )
        for a in snap.agents.values():
            bm = a.bookmark.model_dump() if a.bookmark else None
            lines.append(
                style.clip(
                    f"    {a.agent_id}: {len(a.indices)} message(s), bookmark {bookmark_short(bm)}; next: {next_invoke(a).summary}"
                )
            )
    write(lines)
    return 1 if errors else 0


def _tail(args: argparse.Namespace, store: Store, style: Style) -> int:
    from elsai.cli.sessions.tail import follow

    return follow(args, store, style)
