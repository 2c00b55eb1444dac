"""Session pages: the list (newest first, filtered) and one session's transcript and check.

Read-only: these pages only read the store, so they are safe beside a live writer.
"""

from __future__ import annotations

from datetime import UTC, datetime

from elsai.client import JobsApi
from elsai.console.graph import graph_section
from elsai.console.html import badge, error_box, esc, filters, href, table
from elsai.console.node_view import node_attempts
from elsai.console.sources import SessionStore
from elsai.console.transcript import agent_section
from elsai.ids import validate_id
from elsai.session.inspect.check import SessionSnapshot, check_snapshot, load_session
from elsai.session.inspect.resumes import load_resumes

#: Session statuses whose page keeps refreshing (a run goes on, or waits for an answer).
ACTIVE = frozenset({"running", "interrupted"})
STATUSES = ["running", "interrupted", "completed", "failed", "problems", "idle"]
_RUN_STATUS = {"executing": "running", "completed": "completed", "failed": "failed",
               "interrupted": "interrupted", "paused": "running", "pending": "idle"}  # fmt: skip
#: Sessions summarised per list page (newest first); the rest are counted, not read.
MAX_LISTED = 200


class NotFoundError(Exception):
    """Nothing stored under that id (a 404 page)."""


def iso(ts: float | None) -> str:
    """Epoch seconds as ISO-8601 UTC."""
    if ts is None:
        return ""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def session_status(snap: SessionSnapshot) -> str:
    """One word for a session: problems, interrupted, running (an active bookmark), completed."""
    if any(p.severity == "error" for p in snap.problems):
        return "problems"
    agents = list(snap.agents.values())
    cursor = snap.multi_agent
    if isinstance(cursor, dict) and cursor.get("status") in _RUN_STATUS:
        return _RUN_STATUS[str(cursor["status"])]  # a Graph or Swarm: its run's status
    if any(a.pending_interrupts for a in agents):
        return "interrupted"
    if any(a.bookmark is not None and a.bookmark.is_active for a in agents):
        return "running"
    if agents and all(a.bookmark is not None for a in agents):
        return "completed"
    return "idle"


def sessions_list(store: SessionStore, status: str | None, text: str | None) -> str:
    """The sessions of the store, newest activity first, with status and agents."""
    latest: dict[str, float] = {}
    for key, ts in store.times("session_").items():
        top, slash, _ = key.partition("/")
        if slash and top.startswith("session_"):
            sid = top.removeprefix("session_")
            latest[sid] = max(ts, latest.get(sid, 0.0))
    ordered = sorted(latest.items(), key=lambda item: item[1], reverse=True)
    if text:
        ordered = [(sid, ts) for sid, ts in ordered if text.lower() in sid.lower()]
    rows: list[list[str]] = []
    for sid, ts in ordered[:MAX_LISTED]:
        row = _row(store, sid, ts)
        if row is not None and status in (None, "", row[0]):
            rows.append(row[1])
    more = len(ordered) - MAX_LISTED
    body = filters("/sessions", STATUSES, status, text)
    body += f'<p class="small">store: {esc(store.location)}</p>'
    if not rows:
        body += "<p>no sessions match</p>"
    else:
        body += table(["session", "status", "agents", "messages", "last activity"], rows,
                      caption="sessions, newest first")  # fmt: skip
    if more > 0:
        body += f'<p class="small">{more} older session(s) not shown: filter by id</p>'
    return body


def _row(store: SessionStore, sid: str, ts: float) -> tuple[str, list[str]] | None:
    try:
        snap = load_session(store.storage, sid, last=1)
    except ValueError:  # an id outside the layout: list it, do not link it
        return "problems", [esc(sid), badge("problems"), "", "", esc(iso(ts))]
    if snap is None:
        return None
    word = session_status(snap)
    agents = ", ".join(esc(a) for a in sorted(snap.agents))
    count = sum(len(a.indices) for a in snap.agents.values())
    link = f'<a href="{href("sessions", sid)}">{esc(sid)}</a>'
    return word, [link, badge(word), agents, esc(count), esc(iso(ts))]


def session_page(
    store: SessionStore,
    sid: str,
    agent_id: str | None,
    job: tuple[JobsApi | None, str] | None = None,
) -> tuple[bool, list[tuple[str, str]]]:
    """(active, parts) of one session: graph, check findings, each agent's transcript.

    `job`: (client, job id) when a node was opened from a job's drawing: that node's slices
    in the job come first. `active`: the session still runs, so the page keeps refreshing.
    """
    try:
        validate_id(sid, "session id")
    except ValueError as exc:
        raise NotFoundError(str(exc)) from None
    snap = load_session(store.storage, sid)
    if snap is None:
        raise NotFoundError(f"no session {sid} in {store.location}")
    if agent_id and agent_id not in snap.agents:
        raise NotFoundError(f"no agent {agent_id} in session {sid}")
    status = session_status(snap)
    parts = [
        ("status", f'<p>{badge(status)} <span class="small">{esc(store.location)}</span></p>'),
    ]
    if job is not None and agent_id:
        parts.append(("node-slices", node_attempts(job[0], job[1], agent_id)))
    if snap.multi_agent is not None:
        job_id = job[1] if job is not None else None
        parts.append(("graph", graph_section(sid, snap.multi_agent, snap, job_id=job_id)))
    parts.append(("check", _check(store, snap)))
    for agent in snap.agents.values():
        if agent_id in (None, agent.agent_id):
            resumes, notes = load_resumes(store.storage, sid, agent.agent_id)
            parts.append((f"agent-{agent.agent_id}", agent_section(sid, agent, resumes, notes)))
    return status in ACTIVE, parts


def _check(store: SessionStore, snap: SessionSnapshot) -> str:
    """What `elsai sessions check` finds, each finding with the repair it words."""
    problems = check_snapshot(store.storage, snap)
    if not problems:
        return '<section aria-labelledby="check-h"><h2 id="check-h">check</h2><p>ok: no problems found</p></section>'
    items = "".join(
        f"<li>{badge(p.severity)} <code>{esc(p.path)}</code> {esc(p.message)}</li>"
        for p in problems
    )
    return (
        '<section aria-labelledby="check-h"><h2 id="check-h">check</h2>'
        f'{error_box(f"{len(problems)} problem(s) found")}<ul class="problems">{items}</ul>'
        '<p class="small">Safe repair for a bad bookmark: move checkpoint.json aside (never edit '
        "messages); the next invoke continues from the stored messages and answers a pending tool "
        "call as interrupted.</p></section>"
    )
