"""HTML building blocks. Every value shown passes through `esc` (or `attr`): all of it is untrusted.

Pages are plain strings built from escaped pieces; there is no template engine, so there is no
"safe" flag to forget. Only this module's helpers produce markup.
"""

from __future__ import annotations

import hashlib
import html
import json
from typing import Any
from urllib.parse import quote

#: Text longer than this is folded into a <details> (shown on request).
FOLD_CHARS = 600
FOLD_LINES = 12


def esc(value: Any) -> str:
    """`value` as text that cannot become markup (quotes escaped too, for attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


def href(*parts: str, **query: str | None) -> str:
    """A same-site URL from path parts (each percent-encoded) and query values, escaped."""
    path = "/" + "/".join(quote(p, safe="") for p in parts)
    pairs = [f"{quote(k)}={quote(v, safe='')}" for k, v in query.items() if v]
    return esc(path + ("?" + "&".join(pairs) if pairs else ""))


def pretty(value: Any) -> str:
    """JSON pretty-printed (bytes shown by size), as escaped text for a <pre>."""
    text = json.dumps(
        value, ensure_ascii=False, indent=2, default=lambda b: f"<{len(b)} bytes>", sort_keys=False
    )
    return esc(text)


def folded(text: str, *, css: str = "text") -> str:
    """A block of text; long ones folded so a transcript stays scannable."""
    body = f'<pre class="{css}">{esc(text)}</pre>'
    if len(text) <= FOLD_CHARS and text.count("\n") < FOLD_LINES:
        return body
    summary = esc(text[:120].replace("\n", " ")) + "…"
    return f'<details class="fold"><summary>{summary} ({len(text)} characters)</summary>{body}</details>'


def folded_json(value: Any) -> str:
    """JSON pretty-printed, folded when long."""
    text = json.dumps(value, ensure_ascii=False, indent=2, default=lambda b: f"<{len(b)} bytes>")
    return folded(text, css="json")


def badge(status: Any) -> str:
    """A status word with a class per status (colour is never the only signal: the word is shown)."""
    word = str(status or "unknown")
    css = "".join(c for c in word.lower() if c.isalnum() or c == "_")[:40]
    return f'<span class="badge s-{css}">{esc(word)}</span>'


def table(headers: list[str], rows: list[list[str]], *, caption: str) -> str:
    """A table of already-escaped cells with a caption (for screen readers too)."""
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return (
        f"<table><caption>{esc(caption)}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def page(title: str, body: str, *, nav: list[tuple[str, str]]) -> str:
    """A whole page: its icon, the stylesheet and the one script from /static, no inline code."""
    links = "".join(f'<li><a href="{esc(url)}">{esc(label)}</a></li>' for label, url in nav)
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)} · elsai console</title>"
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'
        '<link rel="stylesheet" href="/static/console.css">'
        '<script src="/static/console.js" defer></script></head><body>'
        '<a class="skip" href="#main">Skip to content</a>'
        f'<header><nav aria-label="Main"><span class="brand">elsai console</span><ul>{links}</ul>'
        f'</nav></header><main id="main" tabindex="-1"><h1>{esc(title)}</h1>{body}</main>'
        "</body></html>"
    )


def error_box(message: str) -> str:
    """A message saying what went wrong, announced to screen readers."""
    return f'<p class="error" role="alert">{esc(message)}</p>'


def filters(action: str, statuses: list[str], status: str | None, text: str | None) -> str:
    """The filter form of a list: a status choice and text to find in ids (GET, no token)."""
    options = '<option value="">any</option>' + "".join(
        f'<option value="{esc(s)}"{" selected" if s == status else ""}>{esc(s)}</option>'
        for s in statuses
    )
    return (
        f'<form class="filters" method="get" action="{esc(action)}" role="search">'
        f'<label for="f-status">Status</label><select id="f-status" name="status">{options}</select>'
        f'<label for="f-q">Id contains</label>'
        f'<input id="f-q" name="q" type="search" value="{esc(text or "")}">'
        '<button type="submit">Filter</button></form>'
    )


def live_parts(parts: list[tuple[str, str]], quiet: tuple[str, ...] = ()) -> str:
    """Parts a live page refreshes, each with a version (a hash) so unchanged ones stay put.

    `quiet` parts are not announced to screen readers when they change (a form being filled).
    """
    return "".join(
        f'<section data-part="{esc(name)}" '
        f'data-version="{hashlib.sha256(body.encode()).hexdigest()[:16]}" '
        f'aria-live="{"off" if name in quiet else "polite"}">{body}</section>'
        for name, body in parts
    )


def live_div(src: str, ended: bool, parts_html: str) -> str:
    """The block console.js polls at `src` (a same-site path) until the page says it ended."""
    return f'<div id="live" data-src="{esc(src)}" data-ended="{int(ended)}">{parts_html}</div>'
