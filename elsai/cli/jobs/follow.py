"""`elsai jobs follow`: a job's events as they land, rendered for a terminal or as JSON lines.

The events come from ``GET /jobs/{id}/events`` (stored messages, slice boundaries, retries,
resumes, interrupts); a spinner runs on a TTY while a slice is in flight. The exit code is
the job's outcome, so scripts can branch on it (`EXIT_CODES`). A poll that fails for a reason
that says nothing about the job (a timeout, a reset, 429/5xx) is retried
(`elsai.cli.jobs.retry`); if the API stays unreachable the follower exits `EXIT_GAVE_UP`.
"""

from __future__ import annotations

import itertools
import json
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from elsai.cli.jobs.retry import EXIT_GAVE_UP, GaveUp, RetryPolicy, describe
from elsai.cli.render import Style
from elsai.client import JobsApi
from elsai.serverless.contract.jobs_api import Job

#: Exit code of `follow` (and `start --follow`) per final status; EXIT_GAVE_UP (5): the API
#: could not be reached for the whole retry window, the job may still be running.
EXIT_CODES = {"SUCCEEDED": 0, "FAILED": 1, "TIMED_OUT": 1, "CANCELLED": 3, "ABORTED": 3, "WAITING_FOR_INPUT": 4}  # fmt: skip
TERMINAL = frozenset({"SUCCEEDED", "FAILED", "TIMED_OUT", "CANCELLED", "ABORTED"})
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def _message(event: dict[str, Any], style: Style) -> list[str]:
    lines = []
    if event.get("text"):
        who = style.paint(f"{event.get('role')}:", "bold")
        lines.append(style.clip(f"{who} {event['text']}".replace("\n", " ")))
    for call in event.get("tool_calls") or []:
        lines.append(style.clip(f"  → {call.get('name')}({call.get('input')})  [running]"))
    for result in event.get("tool_results") or []:
        mark = (
            style.paint("✓", "green")
            if result.get("status") == "success"
            else style.paint("✗", "red")
        )
        lines.append(style.clip(f"  {mark} {result.get('id')}: {result.get('text')}"))
    return lines


def render(event: dict[str, Any], style: Style, job_id: str) -> list[str]:
    """Terminal lines for one event (empty for events that show nothing)."""
    kind, n = event.get("type"), event.get("slice")
    if kind == "message":
        return _message(event, style)
    if kind == "slice_started":
        return [style.paint(f"── slice {n} started", "dim")]
    if kind == "slice_ended":
        text = f"── slice {n} ended: {event.get('status')} ({event.get('stop_reason')}, {event.get('cycles')} cycles)"
        return [style.paint(text, "dim")]
    if kind == "attempt_failed":
        return [
            style.paint(
                f"✗ attempt failed: {event.get('error')}: {event.get('cause') or ''}", "red"
            )
        ]
    if kind == "retry":
        return [style.paint(f"↻ retrying slice {n} (attempt {event.get('attempt')})", "yellow")]
    if kind == "resumed":
        return [style.paint(f"⟳ resumed from checkpoint ({event.get('position')})", "cyan")]
    if kind == "interrupted":
        return [
            style.paint(f"? {i.get('id')}: {i.get('name')} {i.get('reason')}", "magenta")
            + f"  (elsai jobs answer {job_id} --interrupt {i.get('id')} --response JSON)"
            for i in event.get("interrupts") or []
        ]
    if kind == "waiting_for_input":
        return [style.paint("⏸ waiting for input", "magenta")]
    if kind == "answered":
        return [f"✓ answered {', '.join(map(str, event.get('interrupt_ids') or []))}"]
    if kind == "continued":
        return [style.paint(f"→ continued in execution {event.get('execution')}", "dim")]
    if kind == "job_ended":
        colour = "green" if event.get("status") == "SUCCEEDED" else "red"
        extra = f": {event.get('error')}" if event.get("error") else ""
        return [style.paint(f"■ job {event.get('status')}{extra}", "bold", colour)]
    return []


class Follower:
    """Polls the events of one job and writes them until the job ends or waits for input."""

    def __init__(self, client: JobsApi, job_id: str, out: TextIO, *, as_json: bool,
                 poll: float = 0.5, sleep: Callable[[float], None] = time.sleep,
                 retry: RetryPolicy | None = None, err: TextIO | None = None) -> None:  # fmt: skip
        """`as_json`: JSON lines; otherwise text (with a spinner when `out` is a TTY).

        `retry` decides how long failed polls are retried (default: `RetryPolicy()`); notes
        about retries and giving up go to `err` (default: stderr).
        """
        self.client, self.job_id, self.out, self.as_json = client, job_id, out, as_json
        self.poll, self.sleep = poll, sleep
        self.err = err if err is not None else sys.stderr
        self.retry = retry if retry is not None else RetryPolicy()
        self.retry.on_retry = self._note_retry
        self.style = Style.for_stream(out)
        self.tty = out.isatty() and not as_json
        self._spin = itertools.cycle(SPINNER)
        self._in_slice = False
        self._spinning = False
        self._cursor: str | None = None

    def _drain(self) -> int:
        shown = 0
        while True:
            page = self.retry.call(lambda: self.client.events(self.job_id, after=self._cursor))
            self._cursor = page.cursor
            for event in page.events:
                self._show(event)
                shown += 1
            if not page.events:
                return shown

    def _show(self, event: dict[str, Any]) -> None:
        if event.get("type") in ("slice_started", "retry"):
            self._in_slice = True
        elif event.get("type") in ("slice_ended", "attempt_failed", "job_ended"):
            self._in_slice = False
        if self.as_json:
            self.out.write(json.dumps(event, ensure_ascii=False) + "\n")
        else:
            self._clear_spinner()
            for line in render(event, self.style, self.job_id):
                self.out.write(line + "\n")
        self.out.flush()

    def _clear_spinner(self) -> None:
        if self._spinning:
            self.out.write("\r\033[K")
            self._spinning = False

    def _note_retry(self, exc: BaseException, wait: float) -> None:
        self._clear_spinner()
        self.err.write(f"elsai: jobs API: {describe(exc)}; retrying in {wait:.1f}s\n")
        self.err.flush()

    def run(self) -> int:
        """Follow to the end; the exit code for the final status (`EXIT_CODES`).

        `EXIT_GAVE_UP` if the API could not be reached for the whole retry window.
        """
        try:
            return self._follow()
        except GaveUp as exc:
            self._clear_spinner()
            self.out.flush()
            self.err.write(
                f"elsai: lost contact with the jobs API ({exc}); the job may still be running: "
                f"check it with `elsai jobs status {self.job_id}` or follow it again with "
                f"`elsai jobs follow {self.job_id}` (same location flags)\n"
            )
            self.err.flush()
            return EXIT_GAVE_UP

    def _follow(self) -> int:
        while True:
            self._drain()
            job = self.retry.call(lambda: self.client.get(self.job_id))
            if job.status in TERMINAL or job.status == "WAITING_FOR_INPUT":
                self._drain()  # events that landed between the last page and the status
                return self._finish(job)
            if self.tty and self._in_slice:
                self.out.write(f"\r{next(self._spin)} model/tools running…")
                self._spinning = True
                self.out.flush()
            self.sleep(self.poll)

    def _finish(self, job: Job) -> int:
        self._clear_spinner()
        if self.as_json:
            line = {"type": "status", **job.as_dict()}
            self.out.write(json.dumps(line, ensure_ascii=False) + "\n")
        elif job.status == "SUCCEEDED":
            text = job.result.get("text") if isinstance(job.result, dict) else None
            if text:
                self.out.write(f"{self.style.paint('result:', 'bold')} {text}\n")
        elif job.status == "WAITING_FOR_INPUT":
            self.out.write(
                f"job {self.job_id} is waiting for input; answer it, then `elsai jobs follow {self.job_id}`\n"
            )
        self.out.flush()
        return EXIT_CODES.get(job.status, 1)
