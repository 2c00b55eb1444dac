"""Multi-agent orchestration: Graph and Swarm, with dual-layer crash recovery.

- The orchestrator's session manager keeps its cursor in `multi_agent.json` (which node
  runs next, what completed, node results, accumulated usage).
- Each node Agent's own session manager + CheckpointConfig keeps mid-loop bookmarks, so a
  node that died mid-tool resumes inside its ReAct loop when the orchestrator is rebuilt
  with the same ids and invoked again.

    from elsai.multiagent import GraphBuilder, Swarm
"""

from elsai.multiagent.base import MultiAgentBase, MultiAgentResult, NodeResult, Status
from elsai.multiagent.graph import (
    Graph,
    GraphBuilder,
    GraphEdge,
    GraphNode,
    GraphResult,
    GraphState,
)
from elsai.multiagent.persistence import MULTI_AGENT_SCHEMA_VERSION
from elsai.multiagent.swarm import Handoff, Swarm, SwarmResult, SwarmState

__all__ = [
    "MULTI_AGENT_SCHEMA_VERSION",
    "Graph",
    "GraphBuilder",
    "GraphEdge",
    "GraphNode",
    "GraphResult",
    "GraphState",
    "Handoff",
    "MultiAgentBase",
    "MultiAgentResult",
    "NodeResult",
    "Status",
    "Swarm",
    "SwarmResult",
    "SwarmState",
]
