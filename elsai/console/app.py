"""The console's routes: which page a request gets, and the two acts (answer, cancel).

No HTTP here (elsai.console.server speaks it); a `Response` is a status, headers and bytes, so
tests can call routes directly too. A failed read is a page that says what failed, not a 500.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field
from importlib import resources
from urllib.parse import quote

from elsai.client import ApiError
from elsai.console import jobs as job_pages
from elsai.console import sessions as session_pages
from elsai.console.html import error_box, esc, live_div, live_parts, page
from elsai.console.sources import Sources
from elsai.errors import ElsaiError

_STATIC = {
    "console.css": "text/css; charset=utf-8",
    "console.js": "text/javascript; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
HTML = "text/html; charset=utf-8"


@dataclass
class Response:
    """What to send: status, headers and body."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class ConsoleApp:
    """The pages over `sources`; `token` guards every state-changing request."""

    sources: Sources
    token: str

    def nav(self) -> list[tuple[str, str]]:
        """The main menu: only what this console has a source for."""
        out = []
        if self.sources.store is not None:
            out.append(("Sessions", "/sessions"))
        if self.sources.jobs is not None:
            out.append(("Jobs", "/jobs"))
        return out

    def html(self, title: str, body: str, status: int = 200) -> Response:
        """A whole page."""
        text = page(title, body, nav=self.nav())
        return Response(status, text.encode(), {"Content-Type": HTML})

    def get(self, parts: list[str], query: dict[str, str]) -> Response:
        """A GET request by path parts."""
        try:
            return self._get(parts, query)
        except session_pages.NotFoundError as exc:
            return self.html("not found", error_box(str(exc)), 404)
        except ApiError as exc:
            status = exc.status if 400 <= exc.status < 500 else 502
            return self.html(
                "jobs API error", error_box(f"the jobs API said: {exc.message}"), status
            )
        except (ElsaiError, OSError, ValueError) as exc:
            return self.html("cannot read", error_box(f"{type(exc).__name__}: {exc}"), 502)

    def _get(self, parts: list[str], query: dict[str, str]) -> Response:
        store, client = self.sources.store, self.sources.jobs
        status, text = query.get("status") or None, query.get("q") or None
        if not parts:
            target = "/sessions" if store is not None else "/jobs"
            return Response(303, headers={"Location": target})
        if parts == ["favicon.ico"]:  # where a browser looks for an icon a page does not name
            parts = ["static", "favicon.svg"]
        if parts[0] == "static" and len(parts) == 2 and parts[1] in _STATIC:
            data = resources.files("elsai.console").joinpath("static", parts[1]).read_bytes()
            return Response(
                200, data, {"Content-Type": _STATIC[parts[1]], "Cache-Control": "no-cache"}
            )
        if parts[0] == "sessions" and store is not None:
            if len(parts) == 1:
                return self.html("sessions", session_pages.sessions_list(store, status, text))
            if len(parts) == 2:
                return self._session_page(parts[1], query)
            if len(parts) == 3 and parts[2] == "live":
                active, shown = self._session_parts(parts[1], query)
                return self._live(not active, live_parts(shown))
        if parts[0] == "jobs" and client is not None:
            if len(parts) == 1:
                return self.html("jobs", job_pages.jobs_list(client, status, text))
            if len(parts) == 2:
                return self._job_page(parts[1])
            if len(parts) == 3 and parts[2] == "live":
                return self._live(*job_pages.job_live(client, parts[1], self.token, store))
        raise session_pages.NotFoundError("no such page")

    def _live(self, ended: bool, body: str) -> Response:
        """The parts a live page polls for; X-Live-Ended tells its script to stop."""
        headers = {"Content-Type": HTML, "X-Live-Ended": "1" if ended else "0"}
        return Response(200, body.encode(), headers)

    def _session_parts(self, sid: str, query: dict[str, str]) -> tuple[bool, list[tuple[str, str]]]:
        assert self.sources.store is not None
        agent, job_id = query.get("agent") or None, query.get("job") or None
        job = (self.sources.jobs, job_id) if job_id else None
        return session_pages.session_page(self.sources.store, sid, agent, job)

    def _session_page(self, sid: str, query: dict[str, str]) -> Response:
        active, shown = self._session_parts(sid, query)
        wanted = {k: query.get(k) or None for k in ("agent", "job")}
        src = "/sessions/" + quote(sid, safe="") + "/live"
        pairs = "&".join(f"{k}={quote(v, safe='')}" for k, v in wanted.items() if v)
        body = live_div(src + ("?" + pairs if pairs else ""), not active, live_parts(shown))
        return self.html(f"session {sid}", body)

    def _job_page(self, job_id: str) -> Response:
        assert self.sources.jobs is not None
        ended, live = job_pages.job_live(self.sources.jobs, job_id, self.token, self.sources.store)
        body = live_div("/jobs/" + quote(job_id, safe="") + "/live", ended, live)
        return self.html(f"job {job_id}", body)

    def post(self, parts: list[str], form: dict[str, str]) -> Response:
        """An act: answer or cancel. Refused without this run's token."""
        if not hmac.compare_digest(form.get("token", "").encode(), self.token.encode()):
            return self.html("refused", error_box("missing or wrong console token"), 403)
        client = self.sources.jobs
        if client is None or len(parts) != 3 or parts[0] != "jobs":
            return self.html("not found", error_box("no such act"), 404)
        job_id, act = parts[1], parts[2]
        back = "/jobs/" + quote(job_id, safe="")
        try:
            if act == "answer":
                client.answer(job_id, job_pages.parse_answers(form))
            elif act == "cancel":
                client.cancel(job_id)
            else:
                return self.html("not found", error_box("no such act"), 404)
        except job_pages.ActError as exc:
            return self._refused(back, str(exc), 400)
        except ApiError as exc:
            return self._refused(
                back, f"the jobs API refused it: {exc.message}", 409 if exc.status == 409 else 400
            )
        return Response(303, headers={"Location": back})

    def _refused(self, back: str, message: str, status: int) -> Response:
        link = f'<p><a href="{esc(back)}">back to the job</a></p>'
        return self.html("not sent", error_box(message) + link, status)
