"""`elsai console` in a real browser against the local runtime (see conftest.py).

A killed attempt, its retry and the resume appear on an open job page without a reload; a
waiting job is answered from the page; a Graph job shows its nodes' states; cancel from the
page stops a running job; hostile tool output renders as text and runs nothing. Every page
a test shows has no serious or critical axe-core finding, and names the package's icon.
"""

from __future__ import annotations

import time
from pathlib import Path

from elsai.local import Fault, InvocationInfo
from elsai.serverless.contract.jobs_api import Job
from elsai.serverless.contract.steps import RUN_SLICE
from elsai.session.layout import keys
from tests.system.console.conftest import (
    Console,
    Page,
    axe_violations,
    shoot,
    unlabelled_controls,
)
from tests.system.console.hostile import HOSTILE

PROMPT = "Process orders 1, 2 and 3"


def _wait_status(console: Console, job_id: str, *wanted: str, timeout: float = 90) -> Job:
    deadline = time.monotonic() + timeout
    while True:
        job = console.stack.rt.jobs.get(job_id)
        if job.status in wanted:
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.1)


def test_a_killed_attempt_its_retry_and_the_resume_appear_without_reload(
    console: Console, page: Page, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"

    def plan(info: InvocationInfo) -> Fault | None:
        if info.action == RUN_SLICE and info.slice == 0 and info.attempt == 1:
            # held after loading until the test lets it go, then killed inside its 2nd tool
            return Fault(kill_in_tool=2, barrier=str(gate), parties=2, barrier_seconds=120)
        return None

    console.stack.rt.faults = plan
    job = console.stack.rt.jobs.start(PROMPT, session_id="console-crash")
    tab = page.page
    tab.goto(f"{console.url}/jobs/{job.job_id}")
    tab.evaluate("() => { window.__same_page = 1; }")
    live = tab.locator("#live")
    assert "RUNNING" in live.inner_text()
    assert "killed" not in live.inner_text() and "resumed from" not in live.inner_text()
    assert axe_violations(tab) == []  # a running job's page

    gate.mkdir(exist_ok=True)
    (gate / "test-arrived").touch()  # the held attempt goes on, and is killed mid-tool
    tab.locator(".events .e-attempt_failed").wait_for()
    tab.locator(".events .e-resumed").wait_for()
    tab.locator("section[data-part=summary] .s-succeeded").wait_for()
    text = live.inner_text()
    assert "slice 0 attempt killed" in text and "retried: attempt 2" in text
    assert "resumed from after_model" in text
    assert tab.evaluate("() => window.__same_page") == 1  # updated in place, never reloaded
    bars = tab.locator("svg.timeline g.bar")
    assert bars.count() == 2
    assert "killed" in str(bars.nth(0).text_content())
    assert "completed" in str(bars.nth(1).text_content())
    assert page.dialogs == [] and page.errors == []
    shoot(tab, "job-killed-retried-resumed")
    shoot(tab, "readme-job-page", full_page=False)  # the README's picture (docs/img/console.png)
    assert axe_violations(tab) == []  # the same page, updated in place

    # the session's own files say where the resume happened, after the run completed
    tab.goto(f"{console.url}/sessions/console-crash")
    marker = tab.locator(".transcript .resume")
    assert marker.count() == 1 and "resumed from after_model here" in marker.inner_text()
    assert "completed" in tab.locator(".bookmark").inner_text()
    assert unlabelled_controls(tab) == []
    assert axe_violations(tab) == []  # a transcript with a resume marker


def test_a_waiting_job_is_answered_from_the_page_and_completes(
    console: Console, page: Page
) -> None:
    job = console.stack.rt.jobs.start("Refund order 42", agent_id="approver")
    _wait_status(console, job.job_id, "WAITING_FOR_INPUT")
    tab = page.page
    tab.goto(f"{console.url}/jobs/{job.job_id}")
    form = tab.locator("form.answer")
    assert "approve_refund" in form.inner_text() and '"order_id": "42"' in form.inner_text()
    assert unlabelled_controls(tab) == []
    assert axe_violations(tab) == []  # a waiting job with its answer form

    answer = tab.get_by_label("answer (JSON)")
    answer.fill("approve")  # not JSON: refused on the page, nothing sent
    answer.press("Tab")
    tab.keyboard.press("Enter")  # the submit button, reached by keyboard
    tab.locator("[role=alert]").wait_for()
    assert "is not JSON" in tab.locator("[role=alert]").inner_text()
    assert axe_violations(tab) == []  # the refusal
    assert console.stack.rt.jobs.get(job.job_id).status == "WAITING_FOR_INPUT"

    tab.get_by_role("link", name="back to the job").click()
    tab.get_by_label("answer (JSON)").fill('"approve"')
    tab.get_by_role("button", name="Send answers").click()
    tab.locator("section[data-part=summary] .s-succeeded").wait_for()
    assert "approved and paid" in tab.locator("section[data-part=summary]").inner_text()
    assert tab.locator("form.answer").count() == 0
    assert axe_violations(tab) == []
    assert page.errors == []


def test_a_graph_job_shows_its_nodes_states_and_a_node_opens_its_transcript(
    console: Console, page: Page
) -> None:
    job = console.stack.rt.jobs.start("Write about otters", agent_id="graph")
    _wait_status(console, job.job_id, "SUCCEEDED", timeout=120)
    tab = page.page
    tab.goto(f"{console.url}/jobs/{job.job_id}")
    nodes = tab.locator("section.graph svg a.node")
    states = {
        nodes.nth(i).get_attribute("data-node"): nodes.nth(i).get_attribute("data-state")
        for i in range(nodes.count())
    }
    assert states == dict.fromkeys(["researcher", "writer_a", "writer_b", "editor"], "done")
    listed = tab.locator("section.graph ul.nodes").inner_text()
    assert "editor done" in listed
    shoot(tab, "graph-job")
    assert axe_violations(tab) == []  # the graph drawing and its node list
    assert tab.locator("section.graph svg line.edge").count() == 4  # finished: every edge drawn
    tab.locator("section.graph svg a.node[data-node=writer_a]").focus()
    tab.keyboard.press("Enter")  # a node opens by keyboard
    tab.wait_for_url("**/sessions/**agent=writer_a&job=*")
    assert tab.locator("section.agent h2").inner_text().startswith("agent writer_a")
    assert "writer_a-1" in tab.locator(".transcript").inner_text()
    slices = tab.locator("section[data-part=node-slices]")
    assert (
        "slices of node writer_a" in slices.inner_text() and "1 attempt(s)" in slices.inner_text()
    )
    labels = slices.locator("svg.timeline g.bar title").all_text_contents()
    assert labels == ["writer_a · slice 0 · attempt 1: completed"]
    assert "editor" not in slices.inner_text()  # only this node's slices
    shoot(tab, "graph-node-slices")
    assert unlabelled_controls(tab) == []
    assert axe_violations(tab) == []  # one node's transcript and slices


def test_a_swarm_is_drawn_with_its_handoffs_and_a_failed_graph_with_its_failed_node(
    console: Console, page: Page
) -> None:
    swarm = console.stack.rt.jobs.start("A customer writes", agent_id="swarm")
    failed = console.stack.rt.jobs.start("Print it", agent_id="graph-fail")
    _wait_status(console, swarm.job_id, "SUCCEEDED", timeout=120)
    _wait_status(console, failed.job_id, "FAILED", timeout=120)
    tab = page.page
    tab.goto(f"{console.url}/jobs/{swarm.job_id}")
    nodes = tab.locator("section.graph svg a.node")
    drawn = {nodes.nth(i).get_attribute("data-node"): nodes.nth(i).get_attribute("data-state")
             for i in range(nodes.count())}  # fmt: skip
    assert drawn == dict.fromkeys(["triage", "specialist", "closer"], "done")
    assert tab.locator("section.graph svg line.edge").count() == 2  # the two handoffs
    shoot(tab, "swarm-job")
    assert axe_violations(tab) == []
    tab.goto(f"{console.url}/jobs/{failed.job_id}")
    nodes = tab.locator("section.graph svg a.node")
    drawn = {nodes.nth(i).get_attribute("data-node"): nodes.nth(i).get_attribute("data-state")
             for i in range(nodes.count())}  # fmt: skip
    assert drawn == {"researcher": "done", "broken": "failed"}
    assert tab.locator("section.graph svg line.edge").count() == 1
    assert "the printer is on fire" in tab.locator("section[data-part=summary]").inner_text()
    shoot(tab, "graph-failed")
    assert axe_violations(tab) == []
    assert page.errors == []


def test_a_session_page_updates_in_place_while_its_job_runs(console: Console, page: Page) -> None:
    def slow(info: InvocationInfo) -> Fault | None:
        return Fault(tool_seconds=1.5) if info.action == RUN_SLICE else None

    console.stack.rt.faults = slow
    job = console.stack.rt.jobs.start(PROMPT, session_id="console-live")
    tab = page.page
    deadline = time.monotonic() + 60
    while True:  # the session runs once the job wrote its first bookmark
        tab.goto(f"{console.url}/sessions/console-live")
        if tab.locator("section[data-part=status] .s-running").count():
            break
        assert time.monotonic() < deadline
        time.sleep(0.3)
    tab.evaluate("() => { window.__same_page = 1; }")
    assert tab.locator("#live").get_attribute("data-ended") == "0"
    first = tab.locator(".transcript").inner_text()
    assert axe_violations(tab) == []  # a running session
    tab.locator("section[data-part=status] .s-completed").wait_for(timeout=90_000)
    _wait_status(console, job.job_id, "SUCCEEDED")
    assert tab.evaluate("() => window.__same_page") == 1  # updated in place, never reloaded
    assert len(tab.locator(".transcript").inner_text()) > len(first)
    assert tab.locator("#live").get_attribute("data-ended") == "1"  # polling stopped
    assert axe_violations(tab) == []
    assert page.errors == []


def test_cancel_from_the_page_ends_a_running_job(console: Console, page: Page) -> None:
    # Each tool call takes 10 s, so the job still runs when the page's cancel arrives on a slow
    # machine too. moto marks the execution ABORTED once the in-flight slice returns.
    def slow(info: InvocationInfo) -> Fault | None:
        return Fault(tool_seconds=10.0) if info.action == RUN_SLICE else None

    console.stack.rt.faults = slow
    job = console.stack.rt.jobs.start(PROMPT, session_id="console-cancel")
    tab = page.page
    tab.goto(f"{console.url}/jobs/{job.job_id}")
    button = tab.get_by_role("button", name=f"Cancel job {job.job_id}")
    assert axe_violations(tab) == []  # a running job with its cancel form
    button.focus()
    with tab.expect_navigation():
        tab.keyboard.press("Enter")
    tab.wait_for_load_state()
    # accepted: 303 back to the job page; refused: the reason, shown where the form posted
    assert tab.url == f"{console.url}/jobs/{job.job_id}", tab.locator("main").inner_text()
    tab.locator("section[data-part=summary] .s-cancelled").wait_for()
    assert _wait_status(console, job.job_id, "CANCELLED").status == "CANCELLED"
    assert tab.locator("form.cancel").count() == 0  # an ended job offers no acts
    assert axe_violations(tab) == []
    assert page.errors == []


def test_hostile_tool_output_renders_as_text_and_runs_nothing(console: Console, page: Page) -> None:
    job = console.stack.rt.jobs.start("Fetch the page", agent_id="xss", session_id="console-xss")
    _wait_status(console, job.job_id, "SUCCEEDED")
    tab = page.page
    for url in (f"/jobs/{job.job_id}", "/sessions/console-xss", "/sessions", "/jobs"):
        tab.goto(console.url + url)
        tab.wait_for_timeout(300)  # time for anything injected to have run
        assert tab.evaluate("() => window.__xss") is None, url
        assert tab.locator("img[src=x]").count() == 0, url
        assert tab.locator("main script").count() == 0, url
        assert tab.locator("a[href^=javascript]").count() == 0, url
        assert axe_violations(tab) == [], url
    tab.goto(console.url + "/sessions/console-xss")
    shown = tab.locator(".transcript").inner_text()
    assert HOSTILE in shown  # shown as the text it is
    assert "<script>window.__xss=4</script>The page said what it said." in shown
    assert page.dialogs == []


def test_lists_are_newest_first_filter_and_work_by_keyboard(console: Console, page: Page) -> None:
    rt = console.stack.rt
    first = rt.jobs.start("Process order 5", session_id="console-list-a")
    _wait_status(console, first.job_id, "SUCCEEDED")
    time.sleep(1.1)  # S3 LastModified has seconds precision: the second session is newer
    second = rt.jobs.start("Process order 6", session_id="console-list-b")
    _wait_status(console, second.job_id, "SUCCEEDED")
    tab = page.page
    tab.goto(console.url + "/sessions")
    shoot(tab, "sessions-list")
    assert axe_violations(tab) == []
    rows = tab.locator("tbody tr td:first-child").all_inner_texts()
    assert rows.index("console-list-b") < rows.index("console-list-a")
    tab.keyboard.press("Tab")
    assert tab.evaluate("() => document.activeElement.textContent") == "Skip to content"
    tab.get_by_label("Id contains").fill("list-a")
    tab.get_by_label("Id contains").press("Enter")
    tab.wait_for_url("**q=list-a**")
    assert tab.locator("tbody tr td:first-child").all_inner_texts() == ["console-list-a"]
    tab.goto(console.url + "/jobs?status=SUCCEEDED")
    jobs = tab.locator("tbody tr td:first-child").all_inner_texts()
    assert jobs.index(second.job_id) < jobs.index(first.job_id)
    row = tab.locator("tbody tr", has_text=second.job_id).inner_text().split("\t")
    assert row[1:4] == ["SUCCEEDED", "agent", "console-list-b"], row
    assert unlabelled_controls(tab) == []
    assert axe_violations(tab) == []  # a filtered list


def test_every_kind_of_page_has_no_serious_accessibility_violations_and_an_icon(
    console: Console, page: Page
) -> None:
    rt = console.stack.rt

    def kill_once(info: InvocationInfo) -> Fault | None:  # a resume marker in the transcript
        first = info.action == RUN_SLICE and info.slice == 0 and info.attempt == 1
        return Fault(kill_in_tool=1) if first else None

    rt.faults = kill_once
    job = rt.jobs.start("Process order 7", session_id="console-a11y")
    _wait_status(console, job.job_id, "SUCCEEDED")
    rt.faults = None
    corrupt = rt.jobs.start("Process order 8", session_id="console-a11y-corrupt")
    _wait_status(console, corrupt.job_id, "SUCCEEDED")
    bookmark = keys.checkpoint_key("console-a11y-corrupt", "agent")
    rt.s3.put_object(Bucket=rt.bucket, Key=rt.storage_prefix + bookmark, Body=b'{"position": 1}')
    tab = page.page
    pages = {
        "/sessions": "section, table",
        "/sessions?status=problems": "table",
        "/sessions/console-a11y": ".transcript .resume",
        "/sessions/console-a11y-corrupt": "text=invalid checkpoint",
        "/jobs": "table",
        f"/jobs/{job.job_id}": "section[data-part=summary] .s-succeeded",
        "/sessions/no-such-session": "[role=alert]",
    }
    found, icons = {}, set()
    for url, shown in pages.items():
        tab.goto(console.url + url)
        tab.locator(shown).first.wait_for()
        found[url] = axe_violations(tab)
        icons.add(
            tab.evaluate(
                "() => document.querySelector('head link[rel=icon]')?.getAttribute('href')"
            )
        )
    assert found == dict.fromkeys(pages, [])
    assert icons == {"/static/favicon.svg"}  # the package's own file, never from elsewhere
    for path in (*icons, "/favicon.ico"):  # the link, and where a browser looks without one
        answer = tab.request.get(console.url + path)
        assert answer.status == 200, path
        assert answer.headers["content-type"].startswith("image/svg+xml"), path
        assert b"<svg" in answer.body(), path
    assert page.errors == []
