"""The console's server over a real file store: loopback only, Host checked, strict CSP,
acts need the run's token and a same-origin form, and everything stored is shown escaped.

The stores are written by real agents (ScriptedModel), then damaged where a test says so.
"""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.cli.sessions.store import open_store
from elsai.console.server import CSP, ConsoleServer
from elsai.console.sources import Sources
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager

HOSTILE = '<img src=x onerror="alert(1)"><script>alert(2)</script>'


@tool
def fetch(url: str) -> str:
    """Fetch a page.

    Args:
        url: The page.
    """
    return HOSTILE


def _write_session(store: Path, session_id: str) -> None:
    call = {"role": "assistant", "content": [
        {"text": "<b>fetching</b>"},
        {"toolUse": {"toolUseId": "t1", "name": "fetch", "input": {"url": "<script>x</script>"}}},
    ]}  # fmt: skip
    agent = Agent(
        model=ScriptedModel([call, "done"]),
        tools=[fetch],
        config=AgentConfig(
            agent_id="worker",
            session_manager=FileSessionManager(session_id=session_id, storage_dir=str(store)),
            checkpoint=CheckpointConfig(position="both"),
        ),
    )
    agent("go <script>alert(3)</script>")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ConsoleServer]:
    _write_session(tmp_path, "s-ok")
    _write_session(tmp_path, "s-bad")
    bookmark = tmp_path / "session_s-bad/agents/agent_worker/checkpoint.json"
    bookmark.write_text('{"position": "after_lunch"}')
    server = ConsoleServer(Sources(store=open_store(str(tmp_path), None)), token="run-token")
    server.start()
    try:
        yield server
    finally:
        server.close()


def _call(server: ConsoleServer, method: str, path: str, *, host: str | None = None,
          body: bytes | None = None, headers: dict[str, str] | None = None) -> Any:  # fmt: skip
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    sent = {"Host": f"127.0.0.1:{server.port}" if host is None else host, **(headers or {})}
    conn.request(method, path, body=body, headers=sent)
    response = conn.getresponse()
    response.text = response.read().decode()
    conn.close()
    return response


def test_binds_loopback_only_and_refuses_other_host_headers(served: ConsoleServer) -> None:
    assert served.httpd.server_address[0] == "127.0.0.1"
    assert _call(served, "GET", "/sessions").status == 200
    assert _call(served, "GET", "/sessions", host=f"localhost:{served.port}").status == 200
    for host in (f"evil.example:{served.port}", "127.0.0.1", f"127.0.0.1:{served.port + 1}", ""):
        refused = _call(served, "GET", "/sessions", host=host)
        assert refused.status == 421 and "s-ok" not in refused.text, host


def test_every_answer_has_a_strict_policy_and_no_inline_script(served: ConsoleServer) -> None:
    for path in ("/sessions", "/sessions/s-ok", "/sessions/nope", "/static/console.js"):
        response = _call(served, "GET", path)
        assert response.getheader("Content-Security-Policy") == CSP
        assert response.getheader("X-Content-Type-Options") == "nosniff"
        assert response.getheader("X-Frame-Options") == "DENY"
    assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP and "default-src 'none'" in CSP
    page = _call(served, "GET", "/sessions/s-ok").text
    assert page.count("<script") == 1 and '<script src="/static/console.js" defer></script>' in page


def test_stored_content_is_escaped_everywhere(served: ConsoleServer) -> None:
    page = _call(served, "GET", "/sessions/s-ok").text
    assert "<img" not in page and "<b>fetching" not in page and "alert(2)</script>" not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
    assert "go &lt;script&gt;alert(3)&lt;/script&gt;" in page
    assert "&lt;b&gt;fetching&lt;/b&gt;" in page


def test_a_bad_bookmark_shows_the_check_and_its_safe_repair(served: ConsoleServer) -> None:
    page = _call(served, "GET", "/sessions/s-bad").text
    assert "invalid checkpoint" in page and "move checkpoint.json aside" in page
    listing = _call(served, "GET", "/sessions?status=problems").text
    assert "s-bad" in listing and "s-ok" not in listing


@pytest.mark.parametrize(
    "path", ["/sessions/..%2F..%2Fetc", "/sessions/a%00b", "/sessions/" + "x" * 5000, "/nope"]
)
def test_bad_ids_and_paths_get_a_clear_404(served: ConsoleServer, path: str) -> None:
    response = _call(served, "GET", path)
    assert response.status == 404 and 'role="alert"' in response.text


def _form(fields: dict[str, str]) -> tuple[bytes, dict[str, str]]:
    return urlencode(fields).encode(), {"Content-Type": "application/x-www-form-urlencoded"}


def test_acts_need_the_token_a_same_origin_form_and_a_small_body(served: ConsoleServer) -> None:
    body, headers = _form({"token": "wrong"})
    assert _call(served, "POST", "/jobs/j1/cancel", body=body, headers=headers).status == 403
    body, headers = _form({})
    assert _call(served, "POST", "/jobs/j1/cancel", body=body, headers=headers).status == 403
    body, headers = _form({"token": "run-token"})
    evil = {**headers, "Origin": "http://evil.example"}
    assert _call(served, "POST", "/jobs/j1/cancel", body=body, headers=evil).status == 403
    as_json = {"Content-Type": "application/json"}
    assert _call(served, "POST", "/jobs/j1/cancel", body=b"{}", headers=as_json).status == 415
    huge = b"token=run-token&x=" + b"a" * 70_000
    assert _call(served, "POST", "/jobs/j1/cancel", body=huge, headers=headers).status == 413
    # the token is right, but this console has no jobs API: nothing to act on
    same = {**headers, "Origin": f"http://127.0.0.1:{served.port}"}
    assert _call(served, "POST", "/jobs/j1/cancel", body=body, headers=same).status == 404


def test_a_session_page_is_live_only_while_active_and_its_live_part_is_escaped(
    served: ConsoleServer,
) -> None:
    page = _call(served, "GET", "/sessions/s-ok?agent=worker").text
    assert 'data-src="/sessions/s-ok/live?agent=worker" data-ended="1"' in page  # completed
    live = _call(served, "GET", "/sessions/s-ok/live?agent=worker")
    assert live.status == 200 and live.getheader("X-Live-Ended") == "1"
    assert live.text.count("<section data-part=") == 3  # status, check, the agent
    assert '<section data-part="status"' in live.text and "<html" not in live.text
    hostile = _call(served, "GET", "/sessions/s-ok?agent=worker&job=%22%3E%3Cscript%3E").text
    assert "<script>" not in hostile and "no jobs API given to this console" in hostile
    assert _call(served, "GET", "/sessions/nope/live").status == 404


def test_pages_name_the_packaged_icon_and_the_server_answers_for_it(served: ConsoleServer) -> None:
    page = _call(served, "GET", "/sessions").text
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
    for path in ("/static/favicon.svg", "/favicon.ico"):
        response = _call(served, "GET", path)
        assert response.status == 200, path
        assert response.getheader("Content-Type") == "image/svg+xml", path
        assert response.getheader("Content-Security-Policy") == CSP, path
        assert response.text.startswith("<svg") and "</svg>" in response.text, path
