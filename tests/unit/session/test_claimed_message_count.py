"""A stored count that claims more messages than are stored costs what is stored, no more.

checkpoint.json and agent.json record how many messages existed when they were written; the
loader uses that as a hint. A schema-valid but false `message_count` (10**12, 2**63) must be
found out with work bounded by the messages actually stored: the resume gate denies the
bookmark (messages-only continue, with the spec's warning) and the agent goes on.

The load runs in a child process whose address space is capped a little above what it uses
after its imports, so an allocation sized by the claimed count fails the test instead of
exhausting the machine. This file is that child: `python test_claimed_message_count.py ARGS`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEADROOM = 512 * 2**20  # bytes of address space the child may grow by after its imports


def _cap_address_space() -> None:
    import resource

    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[0])
    size = pages * resource.getpagesize() + HEADROOM
    resource.setrlimit(resource.RLIMIT_AS, (size, size))


def child(store: str, manager_name: str) -> int:
    """Run the stored agent once more on `manager_name`, inside the capped address space."""
    import logging

    from elsai import Agent
    from elsai.agent import AgentConfig
    from elsai.checkpoint import CheckpointConfig
    from elsai.conversation import (
        NullConversationManager,
        SlidingWindowConversationManager,
        SummarizingConversationManager,
    )
    from elsai.models import ScriptedModel
    from elsai.session import FileSessionManager

    logging.basicConfig(level=logging.WARNING)
    managers = {
        "null": NullConversationManager,
        "summarizing": SummarizingConversationManager,
        "sliding": SlidingWindowConversationManager,
    }
    conversation = managers[manager_name]()
    manager = FileSessionManager(session_id="s", storage_dir=store)
    _cap_address_space()
    agent = Agent(
        model=ScriptedModel(["again"]),
        config=AgentConfig(
            agent_id="a",
            session_manager=manager,
            conversation_manager=conversation,
            checkpoint=CheckpointConfig(position="both"),
        ),
    )
    result = agent("go on")
    print(json.dumps({"text": str(result), "messages": len(agent.messages)}))
    return 0


if __name__ == "__main__":
    sys.exit(child(sys.argv[1], sys.argv[2]))


import pytest  # noqa: E402

from elsai import Agent  # noqa: E402
from elsai.agent import AgentConfig  # noqa: E402
from elsai.checkpoint import CheckpointConfig  # noqa: E402
from elsai.models import ScriptedModel  # noqa: E402
from elsai.session import FileSessionManager  # noqa: E402

AGENT_DIR = Path("session_s/agents/agent_a")


def _store(tmp_path: Path) -> Path:
    """A stored conversation of two messages, and a bookmark paused after_tools."""
    store = tmp_path / "store"
    agent = Agent(
        model=ScriptedModel(["first"]),
        config=AgentConfig(
            agent_id="a",
            session_manager=FileSessionManager(session_id="s", storage_dir=str(store)),
            checkpoint=CheckpointConfig(position="both"),
        ),
    )
    assert str(agent("hello")) == "first"
    return store


def _claim(store: Path, name: str, count: int) -> None:
    """Make `name` claim `count` messages (checkpoint.json: an active after_tools bookmark)."""
    path = store / AGENT_DIR / name
    if name == "agent.json":
        record = {**json.loads(path.read_text()), "message_count": count}
    else:
        record = {
            "position": "after_tools",
            "cycle_index": 1,
            "schema_version": "1.0",
            "created_at": "2030-01-01T00:00:00.000Z",
            "message_count": count,
            "agent_id": "a",
            "execution_status": "active",
        }
    path.write_text(json.dumps(record))


@pytest.mark.parametrize("count", [10**12, 2**63], ids=["10e12", "2e63"])
@pytest.mark.parametrize("manager", ["null", "summarizing", "sliding"])
@pytest.mark.parametrize("name", ["checkpoint.json", "agent.json"])
def test_a_claimed_count_beyond_the_stored_messages_is_a_mismatch(
    tmp_path: Path, name: str, manager: str, count: int
) -> None:
    store = _store(tmp_path)
    _claim(store, name, count)
    done = subprocess.run(
        [sys.executable, __file__, str(store), manager],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == {"text": "again", "messages": 4}
    denied = "checkpoint resume denied" in done.stderr
    assert denied == (name == "checkpoint.json"), done.stderr  # the gate: messages only
    stored = sorted(p.name for p in (store / AGENT_DIR / "messages").iterdir())
    assert stored == [f"message_{i}.json" for i in range(4)]
