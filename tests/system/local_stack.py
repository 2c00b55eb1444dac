"""What a local job left behind: the tool ledger, the stored transcript, node slices, the cursor.

One `LocalStack` per test module (the `stack` fixture, tests/system/conftest.py) for the
single-agent jobs (tests/system/serverless) and the multi-agent ones (multiagent_serverless).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elsai.local import LocalRuntime
from elsai.session.layout import keys
from elsai.types import Message


@dataclass
class LocalStack:
    rt: LocalRuntime
    ledger_path: Path

    def ledger(self, session_id: str) -> list[dict[str, Any]]:
        if not self.ledger_path.exists():
            return []
        lines = [json.loads(x) for x in self.ledger_path.read_text().splitlines() if x.strip()]
        return [x for x in lines if x["session_id"] == session_id]

    def runs_per_order(self, session_id: str, tool: str = "process_order") -> Counter[str]:
        return Counter(x["order_id"] for x in self.ledger(session_id) if x["tool"] == tool)

    def message_keys(self, session_id: str, agent_id: str = "agent") -> list[str]:
        prefix = keys.messages_prefix(session_id, agent_id)
        return [k for k, _ in self.rt.session_files(session_id) if k.startswith(prefix)]

    def transcript(self, session_id: str, agent_id: str = "agent") -> list[Message]:
        """Stored messages in index order; asserts the indices are contiguous from 0."""
        indexed = sorted(
            (keys.message_index(k), k) for k in self.message_keys(session_id, agent_id)
        )
        assert [i for i, _ in indexed] == list(range(len(indexed))), (
            f"gaps in {[i for i, _ in indexed]}"
        )
        return [self.rt.read_json(k)["message"] for _, k in indexed]

    def bookmark(self, session_id: str, agent_id: str = "agent") -> dict[str, Any]:
        return dict(self.rt.read_json(keys.checkpoint_key(session_id, agent_id)))

    def node_slices(self, job_id: str) -> list[Any]:
        return [
            r for r in self.rt.invocations
            if r.info.job_id == job_id and r.info.action == "node_slice"
        ]  # fmt: skip

    def cursor(self, session_id: str) -> dict[str, Any]:
        return dict(self.rt.read_json(keys.multi_agent_key(session_id)))
