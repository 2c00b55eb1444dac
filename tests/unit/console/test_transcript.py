"""How a stored agent reads on the page: images from their bytes, long text folded, resumes in place."""

from __future__ import annotations

import base64
import re

from elsai.console.transcript import agent_section
from elsai.session.inspect.snapshot import AgentSnapshot
from elsai.session.layout.records import MessageRecord, ResumeRecord

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _agent() -> AgentSnapshot:
    messages = [
        {"role": "user", "content": [{"text": "look " * 400}]},
        {"role": "assistant", "content": [
            {"toolUse": {"toolUseId": "t1", "name": "shot", "input": {"url": "u"}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "status": "success", "content": [
            {"image": {"format": "png", "source": {"bytes": PNG}}},
            {"image": {"format": "svg+xml", "source": {"bytes": b"<svg onload=alert(1)>"}}},
            {"json": {"rows": [1, 2]}},
        ]}}]},
    ]  # fmt: skip
    agent = AgentSnapshot("a1", indices=[0, 1, 2])
    for i, message in enumerate(messages):
        agent.messages[i] = MessageRecord(
            message_id=i, created_at="2026-01-01T00:00:00Z", message=message
        )
    return agent


def test_images_long_text_json_and_the_resume_marker() -> None:
    resume = ResumeRecord(position="after_model", cycle_index=0, message_count=2,
                          resumed_at="2026-01-01T00:00:05Z", invocation_id="inv-2")  # fmt: skip
    html = agent_section("s1", _agent(), [resume], [])
    assert f'src="data:image/png;base64,{base64.b64encode(PNG).decode()}"' in html
    assert html.count("<img") == 1 and "<svg onload" not in html  # only raster images load
    assert "image (svg+xml, 21 bytes) not shown" in html
    assert '<details class="fold"><summary>look look' in html  # 2000 characters: folded
    assert "&quot;rows&quot;" in html
    marker = html.index("resumed from after_model here")
    assert html.index("#1 ") < marker < html.index("#2 ")  # between the toolUse and its result


def test_a_resume_marker_stays_an_item_of_the_transcript_list() -> None:
    resume = ResumeRecord(position="after_model", cycle_index=0, message_count=1,
                          resumed_at="2026-01-01T00:00:05Z")  # fmt: skip
    html = agent_section("s1", _agent(), [resume], [])
    items = re.findall(r"<li\b[^>]*>", html)
    assert '<li class="resume">' in items
    assert all("role=" not in item for item in items)  # a role would take it out of the <ol>
    assert '<div role="note">resumed from after_model here' in html
