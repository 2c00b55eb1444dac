"""Spec "Checkpoint write fails mid-loop: exception propagates", opted in to the after_model
bookmark overlapping the tools (`overlap_after_model`): the failure is raised at the next
boundary, after the tool ran and its result was stored. The in-line case (the default) is
`test_checkpoint_write_failing_mid_loop_propagates`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from elsai.session import FileSessionManager
from tests.unit.checkpoint.helpers import CountingStorage, stored_messages, tool_call


def test_overlapped_checkpoint_write_failing_mid_loop_propagates(
    build: Any, store: Path, ledger: Any
) -> None:
    """Overlapped (opted in), a failed after_model bookmark is raised at the next boundary.

    The tool ran while the bookmark was in flight and its result was stored (a message the
    bookmark does not name); nothing was written after the failure was known, and the next
    invocation continues from the stored result without running the tool again.
    """
    manager = FileSessionManager(session_id="my-job", storage_dir=str(store))
    manager.overlap_after_model = True
    counting = CountingStorage(manager.storage)
    manager.storage = counting
    agent = build([tool_call("t1", city="Paris"), "done"], manager=manager)
    counting.fail_writes_to = lambda key: key.endswith("checkpoint.json")
    with pytest.raises(OSError, match="disk full"):
        agent("weather?")
    assert ledger.runs == ["Paris"]
    assert len(stored_messages(store)) == 3  # prompt, toolUse, toolResult
    assert not (store / "session_my-job/agents/agent_worker/checkpoint.json").exists()
    counting.fail_writes_to = lambda key: False
    again = build(["done"], manager=FileSessionManager(session_id="my-job", storage_dir=str(store)))
    assert again("go on").stop_reason == "end_turn"
    assert ledger.runs == ["Paris"]
