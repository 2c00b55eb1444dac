"""Turn stored sessions into text a person can read in a terminal.

Colour and width clipping apply only when stdout is a terminal: piped output stays plain and
complete so grep, diff and files see every character.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TextIO

from elsai.checkpoint.model import Checkpoint
from elsai.session.inspect.check import NextInvoke, Problem
from elsai.session.layout.records import encode_value

_CODES = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
}
MAX_LINES = 20  # per text block on a terminal; --full shows everything


@dataclass(frozen=True)
class Style:
    """How output looks on this stream: colour and clipping only on a terminal, plain when piped."""

    color: bool = False
    width: int | None = None  # clip lines to this many columns; None: never clip
    max_lines: int | None = None

    @classmethod
    def for_stream(cls, stream: TextIO, *, no_color: bool = False, full: bool = False) -> Style:
        """The style that suits `stream`: a terminal gets colour and clipping unless told otherwise."""
        tty = stream.isatty()
        color = tty and not no_color and not os.environ.get("NO_COLOR")
        width = shutil.get_terminal_size().columns if tty and not full else None
        return cls(color=color, width=width, max_lines=MAX_LINES if tty and not full else None)

    def paint(self, text: str, *styles: str) -> str:
        """`text` in ANSI `styles`, or unchanged when colour is off."""
        if not self.color or not styles:
            return text
        return f"\033[{';'.join(_CODES[s] for s in styles)}m{text}\033[0m"

    def clip(self, line: str, indent: int = 0) -> str:
        """`line` cut to the terminal width so long messages do not wrap the layout."""
        room = None if self.width is None else max(self.width - indent, 10)
        return line if room is None or len(line) <= room else line[: room - 1] + "…"

    def block(self, text: str, indent: int, *styles: str) -> list[str]:
        """Indented lines of `text`, each clipped, at most `max_lines` of them."""
        lines = text.splitlines() or [""]
        extra = 0
        if self.max_lines is not None and len(lines) > self.max_lines:
            lines, extra = lines[: self.max_lines], len(lines) - self.max_lines
        out = [" " * indent + self.paint(self.clip(line, indent), *styles) for line in lines]
        if extra:
            out.append(
                " " * indent + self.paint(f"… {extra} more line(s); --full shows all", "dim")
            )
        return out


def compact(value: Any) -> str:
    """One-line JSON for tool inputs and json results (bytes shown by size, not dumped)."""
    return json.dumps(
        value, ensure_ascii=False, default=lambda b: f"<{len(b)} bytes>", separators=(", ", ": ")
    )


def to_json(value: Any) -> str:
    """Machine output in the stored encoding (elsai.session.layout.records).

    Bytes travel as {"__bytes__": base64}; dicts of the data shaped like a marker are escaped.
    """
    return json.dumps(encode_value(value), ensure_ascii=False)


def iso(ts: float | None) -> str:
    """A timestamp as ISO-8601 UTC (or `-`), the form every other elsai record uses."""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if ts is not None else "-"


def render_message(
    index: int, message: dict[str, Any], style: Style, *, created_at: str = "", prefix: str = ""
) -> list[str]:
    """The lines that show one stored message: a header, then each content block."""
    role = message.get("role", "?")
    head = style.paint(f"{prefix}[{index}] {role}", "bold", "cyan" if role == "user" else "green")
    lines = [head + (" " + style.paint(created_at, "dim") if created_at else "")]
    for block in message.get("content", []):
        lines += _render_block(block, style)
    return lines


def _render_block(block: dict[str, Any], style: Style) -> list[str]:
    if "text" in block:
        return style.block(str(block["text"]), 4)
    if "toolUse" in block:
        use = block["toolUse"]
        call = f"→ {use.get('name')}({compact(use.get('input', {}))})"
        return [
            "    "
            + style.paint(style.clip(call, 4 + len(str(use.get("toolUseId"))) + 6), "yellow")
            + style.paint(f"  id={use.get('toolUseId')}", "dim")
        ]
    if "toolResult" in block:
        result = block["toolResult"]
        failed = result.get("status") == "error"
        label = (
            f"← {result.get('toolUseId')} {'ERROR' if failed else result.get('status', 'success')}"
        )
        body = "\n".join(_result_part(part) for part in result.get("content", []))
        colour = ("bold", "red") if failed else ("blue",)
        first, *rest = body.splitlines() or [""]
        lines = ["    " + style.paint(style.clip(f"{label}: {first}", 4), *colour)]
        return lines + (
            style.block("\n".join(rest), 6, "red")
            if rest and failed
            else style.block("\n".join(rest), 6)
            if rest
            else []
        )
    if "reasoningContent" in block:
        text = block["reasoningContent"].get("reasoningText", {}).get("text", "")
        return style.block(f"[reasoning] {text}", 4, "dim")
    if "image" in block or "document" in block:
        kind = "image" if "image" in block else "document"
        spec = block[kind]
        data = spec.get("source", {}).get("bytes", b"")
        name = f" {spec['name']}" if spec.get("name") else ""
        return [
            "    "
            + style.paint(f"[{kind}{name} {spec.get('format', '?')}, {len(data)} bytes]", "magenta")
        ]
    kind = next(iter(block), "?")
    return ["    " + style.paint(style.clip(f"[{kind}] {compact(block.get(kind))}", 4), "dim")]


def _result_part(part: dict[str, Any]) -> str:
    if "text" in part:
        return str(part["text"])
    if "json" in part:
        return compact(part["json"])
    kind = next(iter(part), "?")
    return f"[{kind}]"


def bookmark_line(bookmark: Checkpoint | None) -> str:
    """A bookmark in one line, with every field that decides the next resume."""
    if bookmark is None:
        return "none"
    return (
        f"{bookmark.position} · cycle {bookmark.cycle_index} · message_count {bookmark.message_count} · "
        f"{bookmark.execution_status} · {bookmark.created_at}"
    )


def bookmark_short(checkpoint: dict[str, Any] | None) -> str:
    """A bookmark in a few characters, for the `ls` table."""
    if not checkpoint:
        return "-"
    return f"{checkpoint.get('position')}#{checkpoint.get('cycle_index')} {checkpoint.get('execution_status')}"


def next_line(decision: NextInvoke, style: Style) -> str:
    """What the next invoke would do, coloured by whether it resumes, waits or continues."""
    colour = {
        "resume_after_model": "yellow",
        "resume_after_tools": "yellow",
        "interrupt_responses": "magenta",
    }
    return style.paint(
        decision.summary,
        colour.get(decision.action, "red" if decision.action == "cannot_load" else "green"),
    )


def problem_line(problem: Problem, style: Style) -> str:
    """One problem of `sessions check`: severity and file, then the message indented below."""
    tag = style.paint(
        f"{problem.severity:<7}", "red" if problem.severity == "error" else "yellow", "bold"
    )
    return f"{tag} {problem.path}\n        {problem.message}"


def job_heading(job_id: str, status: str, style: Style) -> list[str]:
    """The first lines of every `elsai local run` summary: a gap, then the job and its status.

    One heading for the agent and the multi-agent summaries, so both read alike; green only
    when the job succeeded.
    """
    colour = "green" if status == "SUCCEEDED" else "red"
    return ["", style.paint(f"Job {job_id}: {status}", "bold", colour)]


def table(rows: list[list[str]], style: Style, header: list[str]) -> list[str]:
    """Left-aligned columns; the last column is clipped to the terminal when there is one."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def fmt(row: list[str]) -> str:
        return style.clip(
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        )

    return [style.paint(fmt(header), "bold"), *(fmt(r) for r in rows)]


def write(lines: list[str], stream: TextIO | None = None) -> None:
    """Print `lines` to `stream` (stdout by default)."""
    out = stream or sys.stdout
    for line in lines:
        out.write(line + "\n")
