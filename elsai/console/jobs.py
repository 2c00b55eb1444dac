"""Job pages: the list, one job's live part (status, acts, timeline, events), and the two acts.

Everything goes through `elsai.client.JobsApi`, the client (and auth) of `elsai jobs`; the
pages read the API's bodies as it sent them (`as_dict`).
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from elsai.client import ApiError, JobsApi
from elsai.console.graph import graph_section
from elsai.console.html import (
    badge,
    error_box,
    esc,
    filters,
    folded,
    folded_json,
    href,
    live_parts,
    table,
)
from elsai.console.sources import SessionStore
from elsai.console.timeline import event_list, timeline_svg
from elsai.session.inspect.check import load_session
from elsai.session.layout import keys

STATUSES = ["RUNNING", "SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"]
ENDED = {"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "CANCELLED"}
MAX_EVENTS = 2_000
LIST_LIMIT = 100
#: Jobs of a list page described one by one (agent and session ids, waiting or not).
DETAILED = 25


class ActError(ValueError):
    """A form the console refuses (bad JSON, no such interrupt): said on the page, nothing sent."""


def jobs_list(client: JobsApi, status: str | None, text: str | None) -> str:
    """Jobs newest first (the API's order), filtered by status and text in the id.

    The list holds ids, statuses and times only; the newest `DETAILED` jobs are described too
    (agent, session, WAITING_FOR_INPUT), a few requests at once.
    """
    page = client.list(limit=LIST_LIMIT, status=status or None)
    listed = [j.as_dict() for j in page.jobs]
    if text:
        listed = [j for j in listed if text.lower() in str(j.get("job_id", "")).lower()]
    with ThreadPoolExecutor(max_workers=8) as pool:
        details = list(pool.map(lambda j: _describe(client, j), listed[:DETAILED]))
    rows = []
    for job in [*details, *listed[DETAILED:]]:
        jid = str(job.get("job_id", ""))
        last = job.get("stopped_at") or ("now" if job.get("status") not in ENDED else "")
        rows.append([
            f'<a href="{href("jobs", jid)}">{esc(jid)}</a>', badge(job.get("status")),
            esc(job.get("agent_id") or ""), esc(job.get("session_id") or ""),
            esc(job.get("started_at")), esc(last),
        ])  # fmt: skip
    body = filters("/jobs", STATUSES, status, text)
    if not rows:
        return body + "<p>no jobs match</p>"
    headers = ["job", "status", "agent", "session", "started", "last activity"]
    return body + table(headers, rows, caption="jobs, newest first")


def _describe(client: JobsApi, listed: dict[str, Any]) -> dict[str, Any]:
    try:
        return {**listed, **client.get(str(listed.get("job_id", ""))).as_dict()}
    except ApiError:
        return listed  # gone or refused since the listing: the list's own fields


def all_events(client: JobsApi, job_id: str) -> list[dict[str, Any]]:
    """Every event of the job so far (paged), at most MAX_EVENTS."""
    out: list[dict[str, Any]] = []
    cursor = None
    while len(out) < MAX_EVENTS:
        page = client.events(job_id, after=cursor, limit=200)
        if not page.events:
            break
        out += page.events
        cursor = page.cursor
    return out


def job_live(
    client: JobsApi, job_id: str, token: str, store: SessionStore | None
) -> tuple[bool, str]:
    """(ended, html) of the parts that change while a job runs; each part carries a version."""
    job = client.get(job_id).as_dict()
    events = all_events(client, job_id)
    status = str(job.get("status"))
    pending = [i for i in job.get("interrupts") or [] if isinstance(i, dict)]
    ended = status in ENDED
    parts = [
        ("summary", _summary(job, linked=store is not None)),
        ("acts", _acts(job_id, status, pending, token, ended)),
        ("graph", _graph(store, job)),
        ("timeline", "<h2>timeline</h2>" + timeline_svg(events, time.time())),
        ("events", "<h2>events</h2>" + event_list(events)),
    ]
    return ended, live_parts(parts, quiet=("acts",))


def _summary(job: dict[str, Any], *, linked: bool) -> str:
    rows = [
        f"<dt>status</dt><dd>{badge(job.get('status'))}</dd>",
        f"<dt>started</dt><dd>{esc(job.get('started_at'))}</dd>",
        f"<dt>agent</dt><dd>{esc(job.get('agent_id'))}</dd>",
    ]
    runs = job.get("executions")
    if isinstance(runs, int) and runs > 1:
        rows.append(f"<dt>executions</dt><dd>{runs} (continued {runs - 1} time(s))</dd>")
    sid = job.get("session_id")
    if sid:
        rows.append(
            f'<dt>session</dt><dd><a href="{href("sessions", str(sid))}">{esc(sid)}</a></dd>'
        )
    result = job.get("result")
    if isinstance(result, dict) and result.get("text"):
        rows.append(f"<dt>result</dt><dd>{folded(str(result['text']))}</dd>")
    error = job.get("error")
    if error and (not isinstance(error, dict) or any(v is not None for v in error.values())):
        rows.append(f"<dt>error</dt><dd>{folded_json(error)}</dd>")
    return f'<dl class="summary">{"".join(rows)}</dl>'


def _graph(store: SessionStore | None, job: dict[str, Any]) -> str:
    sid = job.get("session_id")
    if store is None or not isinstance(sid, str):
        return ""
    try:
        found = store.storage.read(keys.multi_agent_key(sid))
        if found is None:
            return ""
        snap = load_session(store.storage, sid, last=1)
        return graph_section(sid, json.loads(found.data), snap, job_id=job.get("job_id"))
    except ValueError:
        return '<p class="error">multi_agent.json is unreadable</p>'


def _acts(job_id: str, status: str, pending: list[dict[str, Any]], token: str, ended: bool) -> str:
    if ended:
        return ""
    out = []
    if pending:
        fields = "".join(_answer_field(i, item) for i, item in enumerate(pending))
        out.append(
            f'<form class="answer" method="post" action="{href("jobs", job_id, "answer")}">'
            f'<h2>waiting for input</h2><input type="hidden" name="token" value="{esc(token)}">'
            f'{fields}<button type="submit">Send answers</button></form>'
        )
    out.append(
        f'<form class="cancel" method="post" action="{href("jobs", job_id, "cancel")}">'
        f'<input type="hidden" name="token" value="{esc(token)}">'
        f'<button type="submit" class="danger" aria-label="Cancel job {esc(job_id)}">Cancel job</button></form>'
    )
    return "".join(out)


def _answer_field(i: int, item: dict[str, Any]) -> str:
    """One interrupt's part of the form: its reason, then choices (if it names some) or JSON."""
    reason = item.get("reason")
    options = reason.get("options") or reason.get("choices") if isinstance(reason, dict) else None
    head = (
        f"<fieldset><legend>{esc(item.get('name'))} <code>{esc(item.get('id'))}</code></legend>"
        f'<input type="hidden" name="id_{i}" value="{esc(item.get("id"))}">'
        f"<div>reason</div>{folded_json(reason)}"
    )
    if (
        isinstance(options, list)
        and options
        and all(isinstance(o, str | int | float | bool) for o in options)
    ):
        radios = "".join(
            f'<label><input type="radio" name="response_{i}" value="{esc(json.dumps(o))}"'
            f"{' checked' if n == 0 else ''}> {esc(o)}</label>"
            for n, o in enumerate(options)
        )
        return head + f'<div role="radiogroup" aria-label="answer">{radios}</div></fieldset>'
    return head + (
        f'<label for="response_{i}">answer (JSON)</label>'
        f'<textarea id="response_{i}" name="response_{i}" rows="3" required '
        f'aria-describedby="hint_{i}">""</textarea>'
        f'<p id="hint_{i}" class="small">any JSON value: "approve", true, {{"ok": 1}}</p></fieldset>'
    )


def parse_answers(form: dict[str, str]) -> list[dict[str, Any]]:
    """The responses a submitted answer form holds; ActError naming what is wrong."""
    responses = []
    for i in range(100):
        iid = form.get(f"id_{i}")
        if iid is None:
            break
        raw = form.get(f"response_{i}", "")
        try:
            responses.append({"id": iid, "response": json.loads(raw)})
        except ValueError as exc:
            raise ActError(f"the answer to {iid} is not JSON ({exc}); nothing was sent") from None
    if not responses:
        raise ActError("the form holds no answers; nothing was sent")
    return responses


def act_error_page(message: str) -> str:
    """What a refused act shows (the job page link lets the person try again)."""
    return error_box(message)
