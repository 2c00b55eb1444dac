"""A node's slices in one job: the attempts the job events name that node for.

Opened from a Graph's or Swarm's drawing on a job page (`?agent=NODE&job=JOB` on the session
page): the node's transcript comes from the store, its slices and their attempts from the job
events API, each event of a node slice naming its node.
"""

from __future__ import annotations

import time

from elsai.client import ApiError, JobsApi
from elsai.console.html import error_box, esc, href
from elsai.console.jobs import all_events
from elsai.console.timeline import bars, event_list, timeline_svg


def node_attempts(client: JobsApi | None, job_id: str, node: str) -> str:
    """The section: a bar per attempt of the node's slices, then the events in words."""
    head = (
        '<h2 id="node-slices-h">slices of node '
        f'{esc(node)} in job <a href="{href("jobs", job_id)}">{esc(job_id)}</a></h2>'
    )
    if client is None:
        return head + '<p class="small">no jobs API given to this console</p>'
    try:
        events = [e for e in all_events(client, job_id) if e.get("node") == node]
    except ApiError as exc:
        return head + error_box(f"the jobs API said: {exc.message}")
    attempts = bars(events)
    count = f'<p class="attempts">{len(attempts)} attempt(s)</p>' if attempts else ""
    return head + count + timeline_svg(events, time.time()) + event_list(events)
