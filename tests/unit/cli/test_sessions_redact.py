"""`elsai sessions redact`: a rewritten message is what a rebuilt agent is fed.

Message segments copy message files so that a resume need not read every file. A stored
message edited in place (a card number redacted) must not lose to its stale copy: the redact
command rewrites the file and the segments copying it, `sessions check` reports a copy that
differs from its file (a hand edit), and `sessions show` and the model agree on the text.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.conversation.null import NullConversationManager
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager
from elsai.session.layout import keys

SID, AID, CARD = "cards", "clerk", "4111 1111 1111 1111"
MESSAGE_10 = Path(f"session_{SID}/agents/agent_{AID}/messages/message_10.json")


@tool
def lookup(n: int) -> str:
    """Look a customer up."""
    return f"customer {n} pays with card {CARD}" if n == 4 else f"customer {n}"


def _agent(root: Path, replies: list[Any]) -> Agent:
    return Agent(
        model=ScriptedModel(replies, record=False),
        tools=[lookup],
        config=AgentConfig(
            agent_id=AID,
            session_manager=FileSessionManager(session_id=SID, storage_dir=str(root), fsync=False),
            checkpoint=CheckpointConfig(position="both"),
            conversation_manager=NullConversationManager(),
        ),
    )


def _history(root: Path) -> None:
    """150 tool cycles: 302 messages, segments cover [0, 256); message 10 holds the card."""
    uses = [
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": f"t{i}", "name": "lookup", "input": {"n": i}}}]}
        for i in range(150)
    ]  # fmt: skip
    _agent(root, [*uses, "done"])("look them all up")
    assert (root / f"session_{SID}/agents/agent_{AID}/segments/segment_0_256.json").exists()
    assert CARD in (root / MESSAGE_10).read_text()


def _fed(root: Path) -> str:
    """The text of message 10 as the model receives it from an agent rebuilt from the store."""
    seen: list[Any] = []

    def reply(request: Any) -> str:
        seen.append(request.messages[10])
        return "ok"

    _agent(root, [reply])("anything else?")
    return json.dumps(seen[0])


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "elsai.cli", "sessions", *args, "--storage-dir", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_redact_rewrites_the_message_and_its_segment_copies(tmp_path: Path) -> None:
    _history(tmp_path)
    done = _cli(tmp_path, "redact", SID, AID, "10", "--text", "[REDACTED]")
    assert done.returncode == 0, done.stderr
    assert "3 segment(s)" in done.stdout  # [0, 64), [0, 128) and [0, 256) copy message 10
    assert CARD not in (tmp_path / MESSAGE_10).read_text()
    for segment in (tmp_path / f"session_{SID}/agents/agent_{AID}/segments").iterdir():
        assert CARD not in segment.read_text(), segment.name
    fed = _fed(tmp_path)
    assert CARD not in fed and "[REDACTED]" in fed
    shown = _cli(tmp_path, "show", SID, "--json")
    assert shown.returncode == 0 and CARD not in shown.stdout and "[REDACTED]" in shown.stdout
    checked = _cli(tmp_path, "check", SID)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_hand_edited_message_is_reported_until_redact_makes_it_true(tmp_path: Path) -> None:
    _history(tmp_path)
    path = tmp_path / MESSAGE_10
    path.write_text(path.read_text().replace(CARD, "[REDACTED]"))  # an edit by hand
    checked = _cli(tmp_path, "check", SID)
    assert checked.returncode != 0 and "message_10.json differs" in checked.stdout, checked.stdout
    done = _cli(tmp_path, "redact", SID, AID, "10", "--text", "[REDACTED]")
    assert done.returncode == 0, done.stderr
    assert CARD not in _fed(tmp_path)
    assert _cli(tmp_path, "check", SID).returncode == 0


def test_redact_refuses_what_is_not_there(tmp_path: Path) -> None:
    _history(tmp_path)
    missing = _cli(tmp_path, "redact", SID, AID, "999")
    assert missing.returncode == 1 and "no message 999" in missing.stderr
    assert _cli(tmp_path, "redact", "nope", AID, "1").returncode == 2
    key = keys.message_key(SID, AID, 10)
    assert CARD in (tmp_path / key).read_text()
