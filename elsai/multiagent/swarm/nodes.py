"""Checks on the agents a Swarm is built from."""

from __future__ import annotations

from collections.abc import Sequence

from elsai.agent.agent import Agent
from elsai.ids import validate_id
from elsai.multiagent.swarm.handoff import HANDOFF_TOOL_NAME


def check_nodes(nodes: Sequence[Agent]) -> dict[str, Agent]:
    """Swarm nodes by name; refuses duplicates, shared identities and taken tool names."""
    if not nodes:
        raise ValueError("a swarm needs at least one agent")
    named: dict[str, Agent] = {}
    identities: dict[tuple[str, str], str] = {}
    for agent in nodes:
        if not isinstance(agent, Agent):
            raise TypeError(f"swarm nodes must be Agents, got {type(agent).__name__}")
        name = validate_id(agent.name, "swarm node name")
        if any(agent is other for other in named.values()):
            raise ValueError(
                f"agent {name!r} was passed twice; each swarm node needs its own Agent"
            )
        if name in named:
            raise ValueError(
                f"duplicate swarm node name {name!r}: give each agent a unique name or agent_id"
            )
        if HANDOFF_TOOL_NAME in agent.tool_registry:
            raise ValueError(
                f"agent {name!r} already has a tool named {HANDOFF_TOOL_NAME!r} (is it in another Swarm?); "
                "the swarm injects its own"
            )
        manager = agent.config.session_manager
        if manager is not None:
            identity = (manager.session_id, agent.agent_id)
            if identity in identities:
                raise ValueError(
                    f"agents {identities[identity]!r} and {name!r} share session {identity[0]!r} and "
                    f"agent_id {identity[1]!r}; give each node a unique agent_id"
                )
            identities[identity] = name
        named[name] = agent
    return named


def entry_name(nodes: dict[str, Agent], entry_point: Agent | str | None) -> str:
    """The node name of the entry point (the first node by default); unknown ones fail clearly."""
    if entry_point is None:
        return next(iter(nodes))
    if isinstance(entry_point, Agent):
        for name, agent in nodes.items():
            if agent is entry_point:
                return name
        raise ValueError(f"entry point agent {entry_point.name!r} is not one of the swarm's nodes")
    if entry_point not in nodes:
        raise ValueError(f"entry point {entry_point!r} is not a swarm node; nodes: {list(nodes)}")
    return entry_point
