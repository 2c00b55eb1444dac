"""A cap on what pending interrupts may weigh, checked before an agent starts waiting.

A runtime that carries the pending interrupts somewhere small (the serverless runtime: a
Step Functions state) sets `InterruptState.max_pending_bytes`; a batch whose interrupts are
larger is refused before anything is stored, so the session never waits for interrupts
nobody can be asked about, and a later invocation (with the tool fixed) runs normally.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from elsai.errors import ElsaiError


class InterruptPayloadTooLargeError(ElsaiError):
    """The pending interrupts would not fit in the job's state: not retried."""


def payload_bytes(interrupts: Iterable[dict[str, Any]]) -> int:
    """The size of the interrupts as the compact JSON a runtime carries them in."""
    return len(json.dumps(list(interrupts), ensure_ascii=False, separators=(",", ":")).encode())


def check_payload(interrupts: list[dict[str, Any]], limit: int) -> None:
    """Raise InterruptPayloadTooLargeError, with what to do, if `interrupts` exceed `limit`."""
    size = payload_bytes(interrupts)
    if size > limit:
        raise InterruptPayloadTooLargeError(
            f"the pending interrupts take {size} bytes as JSON; a job may carry at most "
            f"{limit} (Step Functions caps state at 256 KiB). Keep interrupt "
            f"reasons small and put large data in the session or agent state. The session "
            f"is intact: fix the tool and resume it."
        )
