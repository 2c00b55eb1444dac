"""Graph: agents (or nested graphs) as nodes, edges with conditions, parallel ready nodes."""

from elsai.multiagent.graph.builder import GraphBuilder
from elsai.multiagent.graph.graph import Graph, GraphConfig
from elsai.multiagent.graph.state import GraphEdge, GraphNode, GraphResult, GraphState

__all__ = [
    "Graph",
    "GraphBuilder",
    "GraphConfig",
    "GraphEdge",
    "GraphNode",
    "GraphResult",
    "GraphState",
]
