"""One transcript path: an orphan toolUse is answered the same way with or without a session.

Before, a session binding repaired a stored orphan on its own (no MessageAddedEvent) while an
in-memory agent repaired it through the loop (with the event). Both now go through
`elsai.loop.transcript`, so hooks, the stream and the store see the same messages.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
from typing import Any

from elsai import Agent, AgentConfig
from elsai.hooks import HookRegistry, MessageAddedEvent
from elsai.loop.events import MessageAddedStreamEvent
from elsai.loop.messages import INTERRUPTED_TOOL_TEXT
from elsai.models.scripted import ScriptedModel
from elsai.session import FileSessionManager
from tests.support.messages import assistant, results_of, tool_use

SEED: list[Any] = [
    {"role": "user", "content": [{"text": "charge order 7"}]},
    assistant(tool_use("t1", "charge", {"order": 7})),  # no result: the process stopped here
]


class AddedMessages:
    """Records every MessageAddedEvent the agent fires."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def register_hooks(self, registry: HookRegistry) -> None:
        registry.add_callback(MessageAddedEvent, lambda e: self.seen.append(e.message))


def run_after_orphan(session_dir: pathlib.Path | None) -> tuple[Agent, AddedMessages, list[Any]]:
    hooks = AddedMessages()
    manager = FileSessionManager("s1", str(session_dir)) if session_dir else None
    agent = Agent(
        ScriptedModel(["done"]),
        messages=SEED,
        config=AgentConfig(session_manager=manager, hooks=[hooks]),
    )

    async def stream() -> list[Any]:
        return [
            e.message
            async for e in agent.stream_async("and order 8")
            if isinstance(e, MessageAddedStreamEvent)
        ]

    return agent, hooks, asyncio.run(stream())


def test_orphan_repair_fires_the_same_events_with_and_without_a_session(
    tmp_path: pathlib.Path,
) -> None:
    memory_agent, memory_hooks, memory_stream = run_after_orphan(None)
    stored_agent, stored_hooks, stored_stream = run_after_orphan(tmp_path)

    for agent, hooks, streamed in (
        (memory_agent, memory_hooks, memory_stream),
        (stored_agent, stored_hooks, stored_stream),
    ):
        repair, answer = hooks.seen
        assert [r["status"] for r in results_of(repair)] == ["error"]
        assert INTERRUPTED_TOOL_TEXT in results_of(repair)[0]["content"][0]["text"]
        assert answer == {"role": "assistant", "content": [{"text": "done"}]}
        assert streamed == hooks.seen
        # The new input joined the repair message, keeping roles alternating.
        assert agent.messages[2]["content"][-1] == {"text": "and order 8"}
    assert memory_agent.messages == stored_agent.messages

    stored = sorted((tmp_path / "session_s1/agents/agent_default/messages").glob("*.json"))
    assert [json.loads(p.read_text())["message"] for p in stored] == stored_agent.messages
