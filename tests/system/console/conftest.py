"""The console against the local runtime, driven by the OS chromium through Playwright.

One LocalRuntime per module (moto + the synthesized state machine + real handler children),
the local jobs API on a free port, and the console on another, reading the runtime's bucket
as `elsai console --s3 s3://BUCKET --api-url URL` would. The browser is Debian's chromium
(never a downloaded build); without /usr/bin/chromium these tests skip. Every test saves a
screenshot of the page it ends on under build/console-screenshots/. `axe_violations` runs
axe-core (npm, package.json) on the page a test shows.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from elsai.cli.sessions.store import open_store
from elsai.client import http_client
from elsai.console.server import ConsoleServer
from elsai.console.sources import Sources
from elsai.local import LocalHttpApi, LocalRuntime
from tests.system.local_stack import LocalStack

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"
SCREENSHOTS = ROOT / "build" / "console-screenshots"
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"  # `npm ci` (make setup) installs it
#: axe-core's impact levels a page may not have at all.
BLOCKING_IMPACTS = ("serious", "critical")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="no /usr/bin/chromium")


@dataclass
class Console:
    stack: LocalStack
    server: ConsoleServer
    api: LocalHttpApi

    @property
    def url(self) -> str:
        return self.server.url.rstrip("/")


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    if not os.path.exists(CHROMIUM):
        pytest.skip("no /usr/bin/chromium")
    ledger = tmp_path_factory.mktemp("console") / "ledger.jsonl"
    paths = (str(HERE), str(HERE.parent / "serverless"), str(HERE.parent / "multiagent_serverless"))
    runtime = LocalRuntime(project=ROOT, agent_factory="console_agents:build_agent",
                           fast_retries=True, pythonpath=paths,
                           child_env={"AGENT_LEDGER": str(ledger)})  # fmt: skip
    with runtime:
        api = LocalHttpApi(runtime).start()
        # the caller's own prefix (owners/<tag>/ under tenant isolation, the service's default),
        # as `elsai console --s3 s3://BUCKET/owners/TAG` reads it; AWS_ENDPOINT_URL: moto
        prefix = runtime.storage_prefix.rstrip("/")
        store = open_store(
            None, f"s3://{runtime.bucket}/{prefix}" if prefix else f"s3://{runtime.bucket}"
        )
        server = ConsoleServer(Sources(store=store, jobs=http_client(api.url, sign=False)))
        server.start()
        try:
            yield Console(LocalStack(runtime, ledger), server, api)
        finally:
            server.close()
            api.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class Page:
    """A browser page plus what it saw: dialogs opened and console errors."""

    page: Any
    dialogs: list[str]
    errors: list[str]


@pytest.fixture
def page(browser: Any, console: Console, request: pytest.FixtureRequest) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(90_000)
    seen = Page(tab, [], [])

    def on_dialog(dialog: Any) -> None:
        seen.dialogs.append(dialog.message)
        dialog.dismiss()

    tab.on("dialog", on_dialog)
    tab.on("pageerror", lambda exc: seen.errors.append(str(exc)))
    try:
        yield seen
    finally:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(SCREENSHOTS / f"{request.node.name}.png"), full_page=True)
        context.close()
    console.stack.rt.faults = None


def shoot(tab: Any, name: str, *, full_page: bool = True) -> Path:
    """Save a screenshot of the page as build/console-screenshots/<name>.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    tab.screenshot(path=str(path), full_page=full_page)
    return path


def unlabelled_controls(tab: Any) -> list[str]:
    """Controls with no accessible name (label, aria-label, aria-labelledby or button text)."""
    return list(
        tab.evaluate(
            """() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')]
                .filter(c => !((c.labels && c.labels.length) || c.getAttribute('aria-label')
                    || c.getAttribute('aria-labelledby') || (c.tagName === 'BUTTON' && c.textContent.trim())))
                .map(c => c.outerHTML)"""
        )
    )


def axe_violations(tab: Any) -> list[str]:
    """axe-core's serious and critical findings on the page as shown now, one line each.

    axe goes into the page through the DevTools protocol (Playwright's evaluate), not a
    script tag: the console's Content-Security-Policy refuses inline and foreign scripts.
    """
    assert AXE.is_file(), f"{AXE} is missing: run `make setup` (npm ci installs axe-core)"
    if not tab.evaluate("() => typeof window.axe === 'object'"):
        tab.evaluate(AXE.read_text())
    found = tab.evaluate(
        """async () => (await axe.run(document, {resultTypes: ['violations']})).violations
            .map(v => ({id: v.id, impact: v.impact, help: v.help,
                        nodes: v.nodes.map(n => n.target.join(' '))}))"""
    )
    return [
        f"{v['id']} ({v['impact']}, {v['help']}): {', '.join(v['nodes'][:5])}"
        for v in found
        if v["impact"] in BLOCKING_IMPACTS
    ]
