"""Interrupts: human-in-the-loop pauses, orthogonal to checkpoint crash recovery."""

from elsai.interrupt.model import Interrupt, InterruptError, InterruptSignal
from elsai.interrupt.state import InterruptState

__all__ = ["Interrupt", "InterruptError", "InterruptSignal", "InterruptState"]
