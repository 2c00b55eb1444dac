"""Progress events of a local run, one per thing a person watching would want to see."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# kind -> short label (the CLI colours by kind)
KINDS = {
    "job_started": "job",
    "slice_started": "slice",
    "retry": "retry",
    "resumed": "resume",
    "tool": "tool",
    "killed": "killed",
    "slice_failed": "error",
    "slice_finished": "slice",
    "parked": "wait",
    "answered": "answer",
    "completed": "done",
    "failed": "failed",
}


@dataclass(frozen=True)
class LocalEvent:
    """One thing that happened to a job (its `kind` is a key of KINDS), for the CLI or a test."""

    kind: str
    job_id: str
    message: str
    slice: int | None = None
    attempt: int | None = None
    data: dict[str, Any] = field(default_factory=dict)
    at: float = field(default_factory=time.time)

    def line(self) -> str:
        """One readable line, e.g. `[slice 0 #2] resumed from after_model`."""
        where, step, node = "", self.data.get("step"), self.data.get("node")
        if step:  # a multi-agent job's plan / fold step
            where = str(step) + (f" #{self.attempt}" if self.attempt else "")
        elif self.slice is not None:
            where = (f"{node} " if node else "") + f"slice {self.slice}"
            where += f" #{self.attempt}" if self.attempt else ""
        label = KINDS.get(self.kind, self.kind)
        return f"{label:>6}  {('[' + where + '] ') if where else ''}{self.message}"


EventSink = Callable[[LocalEvent], None]
