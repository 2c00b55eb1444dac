"""agent.json's conversation_manager_state is untrusted: state no manager wrote is corrupt.

A `removed_message_count` that is not a count, or a summary that is not a user message, is a
SessionCorruptError naming agent.json (like any other bad field), never a TypeError from deep
inside the load or a summary of the wrong shape fed to the model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.conversation import ConversationManager, SummarizingConversationManager
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager
from elsai.session.layout import keys
from elsai.session.layout.records import SessionCorruptError


def _agent(root: Path, manager: ConversationManager | None = None) -> Agent:
    return Agent(
        model=ScriptedModel(["done", "again"]),
        config=AgentConfig(
            agent_id="a",
            session_manager=FileSessionManager(session_id="s", storage_dir=str(root)),
            conversation_manager=manager,
        ),
    )


def _edit_state(root: Path, **fields: Any) -> None:
    path = root / keys.agent_key("s", "a")
    record = json.loads(path.read_text())
    record["conversation_manager_state"].update(fields)
    path.write_text(json.dumps(record))


@pytest.mark.parametrize("count", [{"k": 1}, [1], "7", -1, True, 1.5])
def test_a_removed_count_that_is_not_a_count_is_corrupt(tmp_path: Path, count: Any) -> None:
    _agent(tmp_path)("hi")
    _edit_state(tmp_path, removed_message_count=count)
    with pytest.raises(SessionCorruptError, match="agent.json"):
        _agent(tmp_path)("go on")


@pytest.mark.parametrize("summary", ["a string", {"role": "assistant", "content": []}, [1]])
def test_a_summary_that_is_not_a_user_message_is_corrupt(tmp_path: Path, summary: Any) -> None:
    _agent(tmp_path, SummarizingConversationManager())("hi")
    _edit_state(tmp_path, summary=summary)
    with pytest.raises(SessionCorruptError, match="agent.json"):
        _agent(tmp_path, SummarizingConversationManager())("go on")
