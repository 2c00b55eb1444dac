"""GraphBuilder: declare nodes, edges, entry points and limits; `build()` checks them all."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from elsai.agent.agent import Agent
from elsai.ids import validate_id
from elsai.multiagent.base import MultiAgentBase
from elsai.multiagent.graph.graph import Graph, GraphConfig
from elsai.multiagent.graph.state import GraphEdge, GraphNode, GraphState
from elsai.multiagent.graph.topology import Topology
from elsai.multiagent.invoke import Executor
from elsai.multiagent.limits import positive_seconds

if TYPE_CHECKING:
    from elsai.session.manager import SessionManager

Condition = Callable[[GraphState], bool]


class GraphBuilder:
    """Builds a Graph. Every method returns the builder, so calls can be chained."""

    def __init__(self) -> None:
        self._nodes: dict[str, GraphNode] = {}
        self._edges: list[tuple[str, str, Condition | None]] = []
        self._entry_points: list[str] = []
        self._session_manager: SessionManager | None = None
        self._graph_id = "graph"
        self._max_node_executions: int | None = None
        self._execution_timeout: float | None = None
        self._node_timeout: float | None = None
        self._reset_on_revisit = False

    def add_node(self, executor: Executor, name: str) -> GraphBuilder:
        """Add an Agent (or a nested Graph / Swarm) under a unique node name."""
        if not isinstance(executor, Agent | MultiAgentBase):
            raise TypeError(
                f"a graph node must be an Agent or a Graph/Swarm, got {type(executor).__name__}"
            )
        validate_id(name, "node name")
        if name in self._nodes:
            raise ValueError(f"duplicate node name {name!r}: node names must be unique")
        for other in self._nodes.values():
            if other.executor is executor:
                raise ValueError(
                    f"the same {type(executor).__name__} instance was added twice (as {other.name!r} and {name!r}); "
                    "each node needs its own instance"
                )
        self._nodes[name] = GraphNode(name=name, executor=executor)
        return self

    def add_edge(
        self, from_node: str, to_node: str, condition: Condition | None = None
    ) -> GraphBuilder:
        """`to_node` runs after `from_node` completes, if `condition(state)` holds (None = always)."""
        if condition is not None and not callable(condition):
            raise TypeError(
                f"edge condition must be callable(GraphState) -> bool, got {condition!r}"
            )
        self._edges.append((from_node, to_node, condition))
        return self

    def set_entry_point(self, name: str) -> GraphBuilder:
        """A node that receives the task first (call several times for several entry points)."""
        if name not in self._entry_points:
            self._entry_points.append(name)
        return self

    def set_session_manager(self, manager: SessionManager) -> GraphBuilder:
        """Persist the orchestrator cursor (multi_agent.json) in this session."""
        self._session_manager = manager
        return self

    def set_graph_id(self, graph_id: str) -> GraphBuilder:
        """The graph's id in multi_agent.json and in node invocation ids (default "graph")."""
        self._graph_id = validate_id(graph_id, "graph id")
        return self

    def set_max_node_executions(self, limit: int) -> GraphBuilder:
        """Most node executions per run (cycles count every visit); required for cyclic graphs."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"max node executions must be a positive int, got {limit!r}")
        self._max_node_executions = limit
        return self

    def set_execution_timeout(self, seconds: float | None) -> GraphBuilder:
        """Wall-clock limit of one `graph(task)` call."""
        self._execution_timeout = positive_seconds(seconds, "execution timeout")
        return self

    def set_node_timeout(self, seconds: float | None) -> GraphBuilder:
        """Wall-clock limit of one node execution."""
        self._node_timeout = positive_seconds(seconds, "node timeout")
        return self

    def reset_on_revisit(self, enabled: bool = True) -> GraphBuilder:
        """In cycles, give a revisited node a fresh conversation (agents without a session only)."""
        self._reset_on_revisit = bool(enabled)
        return self

    def build(self) -> Graph:
        """Check the nodes, edges and limits and return the graph; bad definitions fail here."""
        if not self._nodes:
            raise ValueError("a graph needs at least one node: call add_node(agent, name)")
        edges = self._checked_edges()
        topology = Topology(list(self._nodes), edges)
        for name in self._entry_points:
            if name not in self._nodes:
                raise ValueError(
                    f"entry point {name!r} is not a node; nodes: {sorted(self._nodes)}"
                )
        entry_points = list(self._entry_points) or topology.sources()
        if not entry_points:
            raise ValueError(
                "the graph has no entry point: every node has an incoming edge; call set_entry_point(name)"
            )
        cycle = topology.find_cycle()
        if cycle is not None and self._max_node_executions is None:
            raise ValueError(
                f"the graph has a cycle ({' -> '.join(cycle)}); cycles need a limit: "
                "call set_max_node_executions(n)"
            )
        self._check_executors()
        config = GraphConfig(
            graph_id=self._graph_id,
            entry_points=entry_points,
            session_manager=self._session_manager,
            max_node_executions=self._max_node_executions,
            execution_timeout=self._execution_timeout,
            node_timeout=self._node_timeout,
            reset_on_revisit=self._reset_on_revisit,
        )
        return Graph(dict(self._nodes), edges, config)

    def _checked_edges(self) -> list[GraphEdge]:
        edges: list[GraphEdge] = []
        seen: set[tuple[str, str]] = set()
        for from_node, to_node, condition in self._edges:
            for end in (from_node, to_node):
                if end not in self._nodes:
                    raise ValueError(
                        f"edge {from_node!r} -> {to_node!r} names unknown node {end!r}; nodes: {sorted(self._nodes)}"
                    )
            if (from_node, to_node) in seen:
                raise ValueError(f"duplicate edge {from_node!r} -> {to_node!r}")
            seen.add((from_node, to_node))
            edges.append(GraphEdge(from_node, to_node, condition))
        return edges

    def _check_executors(self) -> None:
        """Node agents must not share a persisted identity; nested graphs need their own session."""
        identities: dict[tuple[str, str], str] = {}
        own_session = (
            self._session_manager.session_id if self._session_manager is not None else None
        )
        for node in self._nodes.values():
            executor = node.executor
            if isinstance(executor, Agent):
                manager = executor.config.session_manager
                if manager is not None:
                    identity = (manager.session_id, executor.agent_id)
                    if identity in identities:
                        raise ValueError(
                            f"nodes {identities[identity]!r} and {node.name!r} are agents with the same session "
                            f"{identity[0]!r} and agent_id {identity[1]!r}; give each node a unique agent_id"
                        )
                    identities[identity] = node.name
                    if self._reset_on_revisit:
                        raise ValueError(
                            f"reset_on_revisit cannot reset node {node.name!r}: its agent persists its "
                            "conversation in a session; use an agent without a session manager"
                        )
            else:
                inner = getattr(executor, "session_manager", None)
                if (
                    own_session is not None
                    and inner is not None
                    and inner.session_id == own_session
                ):
                    raise ValueError(
                        f"nested orchestrator {node.name!r} uses session {own_session!r}, the same as this graph; "
                        "each Graph or Swarm keeps its cursor in its own session (multi_agent.json)"
                    )
