"""One schema_version check (elsai.schema) behind both pinned records, each raising its own error."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from elsai.checkpoint import Checkpoint, CheckpointException
from elsai.multiagent.persistence import CursorStore, GraphCursor
from elsai.schema import require_schema_version
from elsai.session import FileSessionManager, SessionCorruptError

NOT_SUPPORTED = "schema_version '2.0' is not supported (this SDK writes '1.0')"


def test_the_helper_passes_the_supported_version_and_names_both_otherwise() -> None:
    assert require_schema_version("1.0", "1.0") == "1.0"
    with pytest.raises(ValueError, match=re.escape(NOT_SUPPORTED)):
        require_schema_version("2.0", "1.0")


def test_a_foreign_checkpoint_raises_checkpoint_exception() -> None:
    data = {
        "position": "after_tools",
        "cycle_index": 0,
        "schema_version": "2.0",
        "created_at": "2025-01-01T00:00:00Z",
        "message_count": 1,
        "agent_id": "a",
    }
    with pytest.raises(CheckpointException) as caught:
        Checkpoint.from_json(json.dumps(data).encode(), "checkpoint.json")
    assert NOT_SUPPORTED in str(caught.value)


def test_a_foreign_orchestrator_cursor_raises_session_corrupt_error(tmp_path: Path) -> None:
    manager = FileSessionManager("s", str(tmp_path))
    cursor = GraphCursor(id="g", run_id="r", status="executing", task="t")  # type: ignore[arg-type]
    stored = {**json.loads(cursor.model_dump_json()), "schema_version": "2.0"}
    manager.write_multi_agent(stored, None)
    with pytest.raises(SessionCorruptError) as caught:
        CursorStore(manager, "graph", "g").load(GraphCursor)
    assert NOT_SUPPORTED in str(caught.value)
