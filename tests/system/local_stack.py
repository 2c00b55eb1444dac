"""What a local multi-agent job left behind: node slices, the tool ledger, the cursor."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elsai.local import LocalRuntime


@dataclass
class MaStack:
    rt: LocalRuntime
    ledger_path: Path

    def ledger(self, session_id: str) -> list[dict[str, Any]]:
        if not self.ledger_path.exists():
            return []
        lines = [json.loads(x) for x in self.ledger_path.read_text().splitlines() if x.strip()]
        return [x for x in lines if x["session_id"] == session_id]

    def node_slices(self, job_id: str) -> list[Any]:
        return [
            r for r in self.rt.invocations
            if r.info.job_id == job_id and r.info.action == "node_slice"
        ]  # fmt: skip

    def cursor(self, session_id: str) -> dict[str, Any]:
        from elsai.session import keys

        return dict(self.rt.read_json(keys.multi_agent_key(session_id)))
