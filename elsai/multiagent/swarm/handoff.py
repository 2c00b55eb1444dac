"""The `handoff_to_agent` tool a Swarm injects into each of its agents.

A handoff is recorded in two places: in the running swarm (through the tool context's
invocation_state) and in the calling agent's state (agent.json), keyed by the invocation
id. The agent state is written at the after_tools boundary that follows the tool, before the
swarm's own cursor; so if the process dies in between, the rebuilt swarm still finds the
handoff in the agent's state and does not invoke that agent again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from elsai.tools.base import AgentTool, error_result, success_result
from elsai.tools.context import ToolContext
from elsai.types import AgentView, ToolResult, ToolSpec, ToolUse

HANDOFF_TOOL_NAME = "handoff_to_agent"
#: agent.state key holding the latest handoff the agent made.
HANDOFF_STATE_KEY = "swarm_handoff"


@dataclass(frozen=True)
class Handoff:
    """One agent passing the task to another, with a message and shared context."""

    from_node: str
    to_node: str
    message: str
    context: dict[str, Any] = field(default_factory=dict)
    invocation_id: str = ""

    def to_state(self) -> dict[str, Any]:
        """The handoff as the agent state records it, so a crashed swarm can tell it happened."""
        return {
            "invocation_id": self.invocation_id,
            "from_node": self.from_node,
            "to_node": self.to_node,
            "message": self.message,
            "context": self.context,
        }

    @classmethod
    def from_state(cls, agent: AgentView, invocation_id: str) -> Handoff | None:
        """The handoff `agent` made during invocation `invocation_id`, if any."""
        data = agent.state.get(HANDOFF_STATE_KEY)
        if not isinstance(data, dict) or data.get("invocation_id") != invocation_id:
            return None
        return cls(
            from_node=str(data.get("from_node", "")),
            to_node=str(data.get("to_node", "")),
            message=str(data.get("message", "")),
            context=dict(data.get("context") or {}),
            invocation_id=invocation_id,
        )


class HandoffTool(AgentTool):
    """Lets the model pass control to another agent of the same swarm."""

    def __init__(self, node_name: str, peers: dict[str, str]) -> None:
        self._node_name = node_name
        self._peers = dict(peers)
        listing = "\n".join(
            f"- {name}: {desc}" if desc else f"- {name}" for name, desc in self._peers.items()
        )
        self._spec: ToolSpec = {
            "name": HANDOFF_TOOL_NAME,
            "description": (
                "Hand the task over to another agent of this swarm when it is better suited to continue. "
                "Your turn ends after this call; the other agent receives your message, the shared "
                "context and the original task.\nAgents you can hand off to:\n"
                + (listing or "(none)")
            ),
            "inputSchema": {
                "json": {
                    "type": "object",
                    "properties": {
                        "agent_name": {
                            "type": "string",
                            "description": "Name of the agent to hand off to.",
                            "enum": list(self._peers),
                        },
                        "message": {
                            "type": "string",
                            "description": "What the next agent should do, and why.",
                        },
                        "context": {
                            "type": "object",
                            "description": "Facts to share with the following agents (JSON object).",
                        },
                    },
                    "required": ["agent_name", "message"],
                }
            },
        }

    @property
    def name(self) -> str:
        """The tool's name as the model calls it."""
        return HANDOFF_TOOL_NAME

    @property
    def spec(self) -> ToolSpec:
        """The tool spec the model sees, listing the agents it may hand off to."""
        return self._spec

    async def invoke(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        """Record the handoff in the agent's state; the swarm then ends the agent's turn.

        Bad input gets an error result the model can correct.
        """
        use_id = tool_use["toolUseId"]
        raw = tool_use.get("input") or {}
        invocation_id = context.invocation_state.get("swarm_invocation_id")
        if not isinstance(invocation_id, str):
            return error_result(
                use_id, f"{HANDOFF_TOOL_NAME} only works while this agent runs inside its swarm."
            )
        if not isinstance(raw, dict):
            return error_result(
                use_id, "handoff input must be a JSON object with agent_name and message"
            )
        target, message, shared = (
            raw.get("agent_name"),
            raw.get("message", ""),
            raw.get("context") or {},
        )
        if target not in self._peers:
            options = ", ".join(self._peers) or "none"
            return error_result(
                use_id, f"Unknown agent {target!r}. You can hand off to: {options}."
            )
        if not isinstance(message, str):
            return error_result(use_id, "message must be a string")
        if not isinstance(shared, dict):
            return error_result(use_id, "context must be a JSON object")
        existing = Handoff.from_state(context.agent, invocation_id)
        if existing is not None:
            return error_result(
                use_id, f"You already handed off to {existing.to_node!r} in this turn."
            )
        handoff = Handoff(self._node_name, target, message, dict(shared), invocation_id)
        try:
            context.agent.state.set(HANDOFF_STATE_KEY, handoff.to_state())
        except ValueError as exc:
            return error_result(use_id, f"context must be JSON-serialisable: {exc}")
        return success_result(
            use_id, f"Handed off to {target}. Your turn ends now; {target} continues."
        )
