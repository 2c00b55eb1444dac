"""BindingSettings: the write knobs one binding runs with, fixed when the agent is bound.

The session manager owns the user-facing knobs (`SessionManager.lease_seconds`,
`overlap_bookmark`, `overlap_after_model`) and turns them into this frozen value in
`bind_agent`; the binding reads only this, so it never depends on the manager.
"""

from __future__ import annotations

from typing import NamedTuple

from elsai.session.write.lease import DEFAULT_LEASE_SECONDS
from elsai.types import Position


class BindingSettings(NamedTuple):
    """How one binding writes; frozen so a knob changed later cannot move a live binding."""

    #: Ownership lease lifetime without renewal (elsai.session.write.lease); None: no lease.
    lease_seconds: float | None = DEFAULT_LEASE_SECONDS
    #: Let the after_tools bookmark PUT overlap the next model call.
    overlap_bookmark: bool = True
    #: With `overlap_bookmark`, let the after_model bookmark PUT overlap the tools too (opt-in:
    #: a tool that kills its process before that PUT lands is then not re-run on resume).
    overlap_after_model: bool = False

    def overlaps(self, position: Position) -> bool:
        """Whether the bookmark at `position` is written in the background (PendingWrite)."""
        if position == "after_model":
            return self.overlap_bookmark and self.overlap_after_model
        return self.overlap_bookmark
