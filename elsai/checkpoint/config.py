"""CheckpointConfig: where the loop saves its bookmark."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ConfigPosition = Literal["after_tools", "after_model", "both"]
_POSITIONS = ("after_tools", "after_model", "both")


@dataclass(frozen=True)
class CheckpointConfig:
    """Which loop boundaries get a bookmark; pass on `AgentConfig(checkpoint=...)`.

    `"both"` exists only here; a saved bookmark always records the single boundary it was
    written at.
    """

    position: ConfigPosition = "after_tools"

    def __post_init__(self) -> None:
        if self.position not in _POSITIONS:
            raise ValueError(
                f"CheckpointConfig.position must be one of {_POSITIONS}, got {self.position!r}"
            )

    def saves(self, boundary: str) -> bool:
        """True if a bookmark is written at `boundary`."""
        return self.position == "both" or self.position == boundary
