"""Old import path of AgentState; the class lives in `elsai.types.state`."""

from elsai.types.state import AgentState

__all__ = ["AgentState"]
