"""A job's events (GET /jobs/{id}/events) as slices and attempts on a time axis, and as a list.

Each attempt of a slice is a bar from its start to how it ended (completed, interrupted,
killed, timed out, throttled, failed); resumes, waits for input, answers and the job's end are
marked on it. The list under the drawing says the same in words, in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from elsai.console.html import badge, esc, folded_json

WIDTH, ROW, LABEL, OUTCOME = 900, 26, 150, 110
CHAR_W, MAX_LABEL = 7, 320  # an average label character's width, the widest label column
SNIPPET = 120


@dataclass
class Bar:
    """One attempt of one slice (or one wait for input)."""

    label: str
    start: float
    end: float | None = None
    outcome: str = "running"
    node: str | None = None  # the Graph's or Swarm's node this slice ran
    marks: list[tuple[float, str]] = field(default_factory=list)


def _ts(event: dict[str, Any]) -> float | None:
    try:
        return datetime.fromisoformat(str(event.get("at")).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def failure_kind(event: dict[str, Any]) -> str:
    """killed, timed out, throttled or failed: what ended an attempt, from its error name."""
    error = f"{event.get('error')} {event.get('cause')}".lower()
    if "exit" in error or "killed" in error or "signal" in error:
        return "killed"
    if "timeout" in error or "timed out" in error:
        return "timed out"
    if "throttl" in error or "toomanyrequests" in error or "rate exceeded" in error:
        return "throttled"
    return "failed"


def bars(events: list[dict[str, Any]]) -> list[Bar]:
    """The attempts and waits the events describe, in the order they began."""
    out: list[Bar] = []
    open_bars: dict[str | None, Bar] = {}  # by node: a Graph's node slices run side by side
    wait: Bar | None = None
    for event in events:
        at, kind = _ts(event), event.get("type")
        if at is None:
            continue
        node = str(event["node"]) if event.get("node") is not None else None
        current = open_bars.get(node)
        if kind in ("slice_started", "retry"):
            attempt = event.get("attempt", 1)
            where = f"{node} · " if node is not None else ""
            current = Bar(f"{where}slice {event.get('slice')} · attempt {attempt}", at, node=node)
            open_bars[node] = current
            out.append(current)
        elif kind == "attempt_failed" and current is not None:
            current.end, current.outcome = at, failure_kind(event)
        elif kind == "resumed" and current is not None:
            # reported when the slice returns; the resume itself happened as the attempt began
            current.marks.append((current.start, f"resumed from {event.get('position')}"))
        elif kind == "slice_ended" and current is not None:
            current.end, current.outcome = at, str(event.get("status") or "ended")
        elif kind == "waiting_for_input":
            wait = Bar("waiting for input", at, outcome="waiting")
            out.append(wait)
        elif kind == "answered" and wait is not None:
            wait.end, wait.outcome = at, "answered"
        elif kind == "continued":  # a zero-length bar where the next execution took over
            out.append(Bar(f"continued: execution {event.get('execution')}", at, at, "continued"))
        elif kind == "job_ended":
            for bar in out:
                if bar.end is None:
                    bar.end, bar.outcome = at, str(event.get("status", "ended")).lower()
    return out


def timeline_svg(events: list[dict[str, Any]], now: float) -> str:
    """The bars on one time axis (an open bar runs to `now`)."""
    shown = bars(events)
    if not shown:
        return '<p class="small">no slices yet</p>'
    t0 = min(b.start for b in shown)
    t1 = max([now if b.end is None else b.end for b in shown] + [t0 + 1])
    # node names make labels longer: the label column grows to fit them (within bounds)
    label_w = min(max(LABEL, max(len(b.label) for b in shown) * CHAR_W + 10), MAX_LABEL)
    scale = (WIDTH - label_w - OUTCOME) / (t1 - t0)
    rows = []
    for i, bar in enumerate(shown):
        y = i * ROW + 20
        x = label_w + (bar.start - t0) * scale
        width = max(((now if bar.end is None else bar.end) - bar.start) * scale, 4)
        css = bar.outcome.replace(" ", "_").lower()
        marks = "".join(
            f'<g class="mark"><title>{esc(text)}</title><circle cx="{label_w + (t - t0) * scale:.1f}" '
            f'cy="{y + 9}" r="5"/></g>'
            for t, text in bar.marks
        )
        rows.append(
            f'<g class="bar o-{esc(css)}"><title>{esc(bar.label)}: {esc(bar.outcome)}</title>'
            f'<text x="4" y="{y + 13}">{esc(bar.label)}</text>'
            f'<rect x="{x:.1f}" y="{y}" width="{width:.1f}" height="18" rx="3"/>'
            f'<text class="outcome" x="{x + width + 4:.1f}" y="{y + 13}">{esc(bar.outcome)}</text>'
            f"</g>{marks}"
        )
    height = len(shown) * ROW + 30
    axis = (
        f'<text class="axis" x="{label_w}" y="12">0 s</text>'
        f'<text class="axis" x="{WIDTH - OUTCOME - 30}" y="12">{t1 - t0:.0f} s</text>'
    )
    return (
        f'<svg class="timeline" role="img" aria-label="slices and attempts on a time axis" '
        f'width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}">{axis}{"".join(rows)}</svg>'
    )


def event_text(event: dict[str, Any]) -> str:
    """One event in words (escaped HTML)."""
    kind, sl = event.get("type"), esc(event.get("slice"))
    if event.get("node") is not None:  # a node's slice: say which node
        sl = f"{sl} of node {esc(event.get('node'))}"
    if kind == "slice_started":
        return f"slice {sl} started"
    if kind == "attempt_failed":
        why = f"{event.get('error')}: {event.get('cause') or ''}"
        return f"slice {sl} attempt {badge(failure_kind(event))} in {esc(event.get('state'))} ({esc(why)})"
    if kind == "retry":
        return f"slice {sl} retried: attempt {esc(event.get('attempt'))}"
    if kind == "resumed":
        return f'<strong class="resumed">resumed from {esc(event.get("position"))}</strong> (slice {sl})'
    if kind == "slice_ended":
        return f"slice {sl} ended {badge(event.get('status'))} stop reason {esc(event.get('stop_reason'))}"
    if kind == "waiting_for_input":
        return f"slice {sl}: waiting for input"
    if kind == "interrupted":
        asked = ", ".join(
            f"{i.get('name')} ({i.get('id')})"
            for i in event.get("interrupts") or []
            if isinstance(i, dict)
        )
        return f"interrupted: {esc(asked)}"
    if kind == "answered":
        return f"answered {esc(', '.join(str(i) for i in event.get('interrupt_ids') or []))}"
    if kind == "job_ended":
        return f"job ended {badge(event.get('status'))} {esc(event.get('error') or '')}"
    if kind == "continued":
        return f"continued in execution {esc(event.get('execution'))}"
    if kind == "message":
        return _message(event)
    return f"{esc(kind)} {folded_json(event)}"


def _message(event: dict[str, Any]) -> str:
    """A message on one line (text start, tool calls, result statuses); the whole on request."""
    bits = []
    text = str(event.get("text") or "")
    if text:
        bits.append(esc(text[:SNIPPET]) + ("…" if len(text) > SNIPPET else ""))
    for call in event.get("tool_calls") or []:
        if isinstance(call, dict):
            shown = str(call.get("input") or "")
            cut = shown[:SNIPPET] + ("…" if len(shown) > SNIPPET else "")
            bits.append(f"→ <b>{esc(call.get('name'))}</b> <code>{esc(cut)}</code>")
    for result in event.get("tool_results") or []:
        if isinstance(result, dict):
            said = str(result.get("text") or "")[:SNIPPET]
            bits.append(f"← {badge(result.get('status') or 'success')} {esc(said)}")
    head = f"message #{esc(event.get('index'))} <b>{esc(event.get('role'))}</b>: "
    return (
        f'<details class="msg-event"><summary>{head}{" ".join(bits)}</summary>'
        f"{folded_json({k: v for k, v in event.items() if k not in ('type', 'at')})}</details>"
    )


def event_list(events: list[dict[str, Any]]) -> str:
    """Every event in order, in words."""
    items = "".join(
        f'<li class="ev e-{esc(e.get("type"))}"><time>{esc(e.get("at"))}</time> {event_text(e)}</li>'
        for e in events
    )
    return f'<ol class="events" aria-label="job events">{items}</ol>'
