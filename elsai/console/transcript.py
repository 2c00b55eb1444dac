"""A stored agent as HTML: messages by role, tool calls and results, bookmark, resumes, interrupts.

Everything comes from the store and is shown escaped; JSON is pretty-printed, long text folded,
images shown from their bytes as data: URLs (the only kind the page's policy lets load).
"""

from __future__ import annotations

import base64
from typing import Any

from elsai.console.html import badge, esc, folded, folded_json, href
from elsai.session.inspect.check import AgentSnapshot, next_invoke
from elsai.session.layout.records import ResumeRecord

_IMAGE_TYPES = {"png", "jpeg", "gif", "webp"}
MAX_IMAGE_BYTES = 2_000_000


def agent_section(
    session_id: str, agent: AgentSnapshot, resumes: list[ResumeRecord], notes: list[str]
) -> str:
    """One agent: bookmark summary first, then its messages with resume markers in place."""
    at: dict[int, list[ResumeRecord]] = {}
    for record in resumes:
        at.setdefault(record.message_count, []).append(record)
    items = []
    for index in agent.indices:
        for record in at.pop(index, []):
            items.append(_resume_marker(record))
        stored = agent.messages.get(index)
        if stored is None:
            items.append(f'<li class="msg bad">message {index} is unreadable (see the check)</li>')
            continue
        items.append(_message(index, stored.message, stored.created_at))
    for records in at.values():  # resumed past the stored messages (e.g. they were trimmed)
        items += [_resume_marker(r) for r in records]
    anchor = esc(f"agent-{agent.agent_id}")
    notes_html = "".join(f'<p class="warning">{esc(n)}</p>' for n in notes)
    return (
        f'<section class="agent" id="{anchor}" aria-labelledby="{anchor}-h">'
        f'<h2 id="{anchor}-h">agent {esc(agent.agent_id)} '
        f'<a class="small" href="{href("sessions", session_id, agent=agent.agent_id)}">only this agent</a></h2>'
        f"{_bookmark(agent)}{_interrupts(agent)}{notes_html}"
        f'<ol class="transcript" aria-label="messages of {esc(agent.agent_id)}">{"".join(items)}</ol>'
        "</section>"
    )


def _bookmark(agent: AgentSnapshot) -> str:
    bookmark = agent.bookmark
    decision = next_invoke(agent)
    if bookmark is None:
        mark = "no bookmark"
    else:
        mark = (
            f"position <b>{esc(bookmark.position)}</b>, {badge(bookmark.execution_status)}, "
            f"{esc(bookmark.message_count)} message(s), cycle {esc(bookmark.cycle_index)}, "
            f"written {esc(bookmark.created_at)}"
        )
    return (
        f'<dl class="bookmark"><dt>bookmark</dt><dd>{mark}</dd>'
        f"<dt>next invoke</dt><dd>{esc(decision.summary)}</dd></dl>"
    )


def _interrupts(agent: AgentSnapshot) -> str:
    state = agent.record.interrupt_state if agent.record else {}
    rows = []
    for item in state.get("pending", []) if isinstance(state, dict) else []:
        if isinstance(item, dict):
            rows.append(
                f"<li>{badge('pending')} {esc(item.get('name'))} <code>{esc(item.get('id'))}</code>"
                f"<div>reason</div>{folded_json(item.get('reason'))}</li>"
            )
    answered = state.get("responses") if isinstance(state, dict) else None
    if isinstance(answered, dict):
        for iid, answer in answered.items():
            rows.append(
                f"<li>{badge('answered')} <code>{esc(iid)}</code>{folded_json(answer)}</li>"
            )
    if not rows:
        return ""
    return f'<h3>interrupts</h3><ul class="interrupts">{"".join(rows)}</ul>'


def _resume_marker(record: ResumeRecord) -> str:
    who = f", invocation {record.invocation_id}" if record.invocation_id else ""
    return (
        # The note is inside the item: a role on the <li> itself would take it out of the list.
        f'<li class="resume"><div role="note">resumed from {esc(record.position)} here '
        f'<span class="small">({esc(record.resumed_at)}, cycle {esc(record.cycle_index)}{esc(who)})</span></div></li>'
    )


def _message(index: int, message: dict[str, Any], created_at: str) -> str:
    role = str(message.get("role"))
    blocks = message.get("content")
    parts = [_block(b) for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else []
    return (
        f'<li class="msg r-{esc(role if role in ("user", "assistant") else "other")}">'
        f'<div class="meta"><span class="role">{esc(role)}</span> #{esc(index)} '
        f"<time>{esc(created_at)}</time></div>{''.join(parts)}</li>"
    )


def _block(block: dict[str, Any]) -> str:
    if "text" in block:
        return folded(str(block["text"]))
    if isinstance(block.get("toolUse"), dict):
        use = block["toolUse"]
        return (
            f'<div class="tool-use"><span class="label">tool call</span> <b>{esc(use.get("name"))}</b> '
            f"<code>{esc(use.get('toolUseId'))}</code>{folded_json(use.get('input'))}</div>"
        )
    if isinstance(block.get("toolResult"), dict):
        result = block["toolResult"]
        content = result.get("content")
        inner = (
            [_block(c) for c in content if isinstance(c, dict)] if isinstance(content, list) else []
        )
        return (
            f'<div class="tool-result"><span class="label">tool result</span> '
            f"{badge(result.get('status') or 'success')} <code>{esc(result.get('toolUseId'))}</code>"
            f"{''.join(inner)}</div>"
        )
    if "json" in block:
        return folded_json(block["json"])
    if isinstance(block.get("image"), dict):
        return _image(block["image"])
    return folded_json(block)


def _image(image: dict[str, Any]) -> str:
    kind = str(image.get("format", "")).lower()
    source = image.get("source")
    data = source.get("bytes") if isinstance(source, dict) else None
    if kind not in _IMAGE_TYPES or not isinstance(data, bytes) or len(data) > MAX_IMAGE_BYTES:
        size = len(data) if isinstance(data, bytes) else 0
        return f'<p class="small">image ({esc(kind or "unknown")}, {size} bytes) not shown</p>'
    encoded = base64.b64encode(data).decode()
    return f'<img class="shot" alt="image from the transcript ({esc(kind)})" src="data:image/{kind};base64,{encoded}">'
