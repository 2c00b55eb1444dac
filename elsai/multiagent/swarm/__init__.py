"""Swarm: agents hand the task to each other with an injected `handoff_to_agent` tool."""

from elsai.multiagent.swarm.handoff import HANDOFF_TOOL_NAME, Handoff, HandoffTool
from elsai.multiagent.swarm.state import SwarmResult, SwarmState
from elsai.multiagent.swarm.swarm import Swarm

__all__ = ["HANDOFF_TOOL_NAME", "Handoff", "HandoffTool", "Swarm", "SwarmResult", "SwarmState"]
