"""Shared by the overlap crash tests: running the child, and the write-order rules of its log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

CHILD = str(Path(__file__).resolve().parent / "overlap_child.py")


def run(args: dict[str, Any], env: dict[str, str]) -> int:
    """Run overlap_child.py with `args`; it either finishes (0) or is SIGKILLed (-9)."""
    proc = subprocess.run(
        [sys.executable, CHILD, json.dumps(args)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, -9), proc.stderr[-2000:]
    return proc.returncode


def check_write_order(lines: list[str], *, messages_may_pass: bool = True) -> None:
    """While a bookmark write is in flight, no tool runs and no write starts but a message's.

    A pending bookmark names only messages already durable, so the next message (the model's
    reply after an after_tools bookmark) may be written alongside it (`messages_may_pass`);
    agent.json, the next bookmark and every tool wait for it. With `messages_may_pass=False`
    (overlap off) nothing at all starts while one is in flight.
    A process killed mid-write leaves its start unmatched; the next process begins afresh.
    """
    open_bookmark = False
    for line in lines:
        if line == "begin":
            open_bookmark = False
        elif line == "start checkpoint.json" or line.startswith("start checkpoint.json "):
            assert not open_bookmark, f"{line!r} started while a bookmark write was in flight"
            open_bookmark = True
        elif line == "end checkpoint.json":
            open_bookmark = False
        elif line.startswith("tool "):
            assert not open_bookmark, f"{line!r} ran while a bookmark write was in flight"
        elif line.startswith("start "):
            allowed = messages_may_pass and line.split(" ")[1].startswith("message_")
            assert not open_bookmark or allowed, (
                f"{line!r} started while a bookmark write was in flight"
            )


def check_overlapped_write_order(lines: list[str]) -> None:
    """With both bookmarks overlapped: only a message write starts while a bookmark is in
    flight (never agent.json or the next bookmark); tools may run under an after_model one."""
    in_flight: str | None = None
    position = ""
    for line in lines:
        if line == "begin":
            in_flight = None
        elif line.startswith("bookmark "):
            position = line.split(" ", 1)[1]
        elif line.startswith("start "):
            name = line.split(" ")[1]
            allowed = name.startswith("message_")
            assert in_flight is None or allowed, f"{line!r} started while {in_flight} in flight"
            if name == "checkpoint.json":
                in_flight = position
        elif line == "end checkpoint.json":
            in_flight = None
