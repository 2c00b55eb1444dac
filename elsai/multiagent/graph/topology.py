"""Graph topology: cycle detection and which triggered nodes are ready to run.

Scheduling rule. When a node completes, each outgoing edge whose condition holds *fires*:
its target is triggered and remembers the source (whose output becomes part of its input).
A triggered node runs as soon as none of its other upstream nodes can still complete
before it, i.e. none of them is running or pending, or reachable from a running or pending
node without passing through the node itself. So a fan-in waits for every branch that can
still arrive (even branches of unequal depth), while a branch whose edge condition did not
hold is simply not waited for. If triggered nodes only wait on each other (a cycle), they
all run, so a run always makes progress; while a node is busy (running, or waiting for a
person) that break waits, since the busy node may still complete and feed them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from elsai.multiagent.graph.state import GraphEdge


class Topology:
    """The graph's edges indexed by node, for the checks `GraphBuilder.build` makes."""

    def __init__(self, names: Sequence[str], edges: Sequence[GraphEdge]) -> None:
        self.names: list[str] = list(names)
        self.edges: list[GraphEdge] = list(edges)
        self.outgoing: dict[str, list[GraphEdge]] = {n: [] for n in self.names}
        self.incoming: dict[str, list[GraphEdge]] = {n: [] for n in self.names}
        for edge in self.edges:
            self.outgoing[edge.from_node].append(edge)
            self.incoming[edge.to_node].append(edge)

    def sources(self) -> list[str]:
        """Nodes without incoming edges, in the order they were added."""
        return [n for n in self.names if not self.incoming[n]]

    def sinks(self) -> set[str]:
        """Nodes without outgoing edges: by default the graph's output nodes."""
        return {n for n in self.names if not self.outgoing[n]}

    def find_cycle(self) -> list[str] | None:
        """One cycle as a node path ending where it starts (["a", "b", "a"]), or None."""
        white, grey, black = 0, 1, 2
        color = dict.fromkeys(self.names, white)
        parent: dict[str, str] = {}
        for root in self.names:
            if color[root] != white:
                continue
            stack: list[tuple[str, int]] = [(root, 0)]
            color[root] = grey
            while stack:
                node, index = stack.pop()
                targets = [e.to_node for e in self.outgoing[node]]
                if index < len(targets):
                    stack.append((node, index + 1))
                    target = targets[index]
                    if color[target] == grey:
                        path = [node]
                        while path[-1] != target:
                            path.append(parent[path[-1]])
                        return [*reversed(path), target]
                    if color[target] == white:
                        color[target] = grey
                        parent[target] = node
                        stack.append((target, 0))
                else:
                    color[node] = black
        return None

    def reachable(self, starts: Iterable[str], avoid: str) -> set[str]:
        """Nodes reachable from `starts` (included) along edges, never entering `avoid`."""
        seen = {s for s in starts if s != avoid}
        todo = list(seen)
        while todo:
            node = todo.pop()
            for edge in self.outgoing[node]:
                if edge.to_node != avoid and edge.to_node not in seen:
                    seen.add(edge.to_node)
                    todo.append(edge.to_node)
        return seen

    def select_ready(self, triggers: dict[str, list[str]], busy: Iterable[str] = ()) -> list[str]:
        """Triggered nodes that may run now (see the module docstring), in node order."""
        busy = list(busy)
        candidates = [n for n in self.names if n in triggers and n not in busy]
        ready = []
        for node in candidates:
            others = [c for c in candidates if c != node] + busy
            waiting_on = {e.from_node for e in self.incoming[node]} - set(triggers[node]) - {node}
            if not waiting_on & self.reachable(others, avoid=node):
                ready.append(node)
        # a cycle is broken only when nothing else runs: a busy (or waiting) node may still
        # complete and feed these candidates
        return ready or ([] if busy else candidates)
