"""`elsai sessions redact`: the one `sessions` command that writes.

It replaces the text of one stored message and rewrites the message segments that copy it
(elsai.session.write.redact), so the transcript a rebuilt agent is fed, `show` and `check`
all agree on the new text. Run it on an agent that is not running.
"""

from __future__ import annotations

import argparse

from elsai.cli.render import Style, to_json, write
from elsai.cli.sessions.store import CliError, Store
from elsai.ids import validate_id
from elsai.session.layout import keys
from elsai.session.write.redact import redact_text, rewrite_message

DEFAULT_TEXT = "[REDACTED]"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """SESSION AGENT INDEX [--text TEXT]."""
    parser.add_argument("session", help="session id")
    parser.add_argument("agent", help="agent id")
    parser.add_argument("index", type=int, help="message number N (messages/message_N.json)")
    parser.add_argument(
        "--text",
        default=DEFAULT_TEXT,
        help=f"what every text of the message becomes, tool results' included (default {DEFAULT_TEXT})",
    )


def run(args: argparse.Namespace, store: Store, style: Style) -> int:
    """Rewrite the message and its segment copies; say what was rewritten."""
    store.require_session(args.session)
    try:
        validate_id(args.agent, "agent id")
    except ValueError as exc:
        raise CliError(str(exc), 2) from None
    if args.index < 0:
        raise CliError("index must be 0 or more", 2)
    segments = rewrite_message(
        store.storage, args.session, args.agent, args.index, redact_text(args.text)
    )
    message = store.storage.describe(keys.message_key(args.session, args.agent, args.index))
    if args.json:
        write([to_json({"message": message, "segments": segments})])
    else:
        write([f"rewrote {message} and {len(segments)} segment(s) that copy it"])
    return 0
