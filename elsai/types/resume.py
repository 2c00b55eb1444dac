"""Where a loop boundary is, and what the next invocation must do about it.

Shared by the loop (which acts on a plan), sessions (which compute it from the stored
bookmark), the checkpoint record and `AgentResult`: one literal, one meaning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: A resumable loop boundary: the toolUse message is durable (tools not yet run), or the
#: tool results are.
Position = Literal["after_model", "after_tools"]


@dataclass(frozen=True)
class ResumePlan:
    """What the next invocation must do before it takes new input."""

    #: Boundary of an active, gate-approved bookmark to act on; None = messages-only continue.
    position: Position | None = None
    #: Cycle index recorded in that bookmark.
    cycle_index: int = 0
    #: The invocation id was already recorded: do not append its input again.
    input_already_recorded: bool = False
