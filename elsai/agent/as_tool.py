"""Agent as tool: a sub-agent the parent model can call like any other tool.

`preserve_context=True` (the default) keeps one sub-agent with its own conversation, session
and checkpoint: if the process dies inside the sub-agent, the parent's pending tool call is
re-run on resume with the same idempotency key, which the sub-agent uses as its exactly-once
`invocation_id`, so the sub-agent resumes inside its own loop instead of starting over.

`mode="spawn"` builds a fresh, stateless copy per call. It has no conversation to come back
to, so it cannot be checkpointed: a crash mid-call simply re-runs the whole sub-task.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from elsai.ids import validate_id
from elsai.tools.base import AgentTool, error_result
from elsai.tools.context import ToolContext
from elsai.types import AgentResult, AgentView, ToolResult, ToolResultStatus, ToolSpec, ToolUse

if TYPE_CHECKING:
    from elsai.agent.config import AgentConfig

Mode = Literal["preserve", "spawn"]


class SubAgent(AgentView, Protocol):
    """What a sub-agent tool needs of its agent (the `Agent` module imports this one)."""

    @property
    def config(self) -> AgentConfig:
        """The agent's settings (its checkpoint and description are read)."""
        ...

    async def invoke_async(self, prompt: Any = None, **kwargs: Any) -> AgentResult:
        """Run one invocation."""
        ...


class SubAgentTool(AgentTool):
    """An agent offered to another agent as a tool (see `agent_as_tool` for the modes)."""

    def __init__(
        self,
        agent: SubAgent,
        name: str,
        description: str,
        mode: Mode,
        spawn: Callable[[], SubAgent],
    ) -> None:
        self.agent = agent
        self.mode = mode
        self._spawn = spawn
        self._spec: ToolSpec = {
            "name": name,
            "description": description,
            "inputSchema": {
                "json": {
                    "type": "object",
                    "properties": {
                        "input": {
                            "type": "string",
                            "description": "The task or question for this agent.",
                        }
                    },
                    "required": ["input"],
                }
            },
        }

    @property
    def name(self) -> str:
        """The tool name the parent model calls."""
        return self._spec["name"]

    @property
    def spec(self) -> ToolSpec:
        """A one-parameter spec: the task for the sub-agent."""
        return self._spec

    async def invoke(self, tool_use: ToolUse, context: ToolContext) -> ToolResult:
        """Run the sub-agent on the task; its final text is the tool result."""
        data = tool_use.get("input")
        task = data.get("input") if isinstance(data, dict) else None
        if not isinstance(task, str) or not task:
            return error_result(
                tool_use["toolUseId"], "Input must be an object with a non-empty 'input' string."
            )
        if self.mode == "spawn":
            result = await self._spawn().invoke_async(task)
        else:
            result = await self.agent.invoke_async(
                task, invocation_id=f"tool:{context.idempotency_key}"
            )
        status: ToolResultStatus = (
            "error" if result.stop_reason not in ("end_turn", "max_tokens") else "success"
        )
        text = str(result) or f"(sub-agent stopped: {result.stop_reason})"
        return {"toolUseId": tool_use["toolUseId"], "status": status, "content": [{"text": text}]}


def agent_as_tool(
    agent: SubAgent,
    name: str | None = None,
    description: str | None = None,
    *,
    spawn: Callable[[], SubAgent],
    preserve_context: bool = True,
    mode: Mode | None = None,
) -> SubAgentTool:
    """Wrap `agent` as a tool: "preserve" keeps its conversation between calls, "spawn" starts fresh each call.

    `spawn` builds the fresh, stateless copy a "spawn" call runs (`Agent.as_tool` passes one).
    """
    resolved: Mode = mode or ("preserve" if preserve_context else "spawn")
    if resolved not in ("preserve", "spawn"):
        raise ValueError(f"mode must be 'preserve' or 'spawn', got {mode!r}")
    if resolved == "spawn" and agent.config.checkpoint is not None:
        raise ValueError(
            f"agent {agent.agent_id!r} has a CheckpointConfig but mode='spawn' gives it no preserved "
            "context to resume; use as_tool(preserve_context=True) for checkpointed sub-agents"
        )
    tool_name = name or agent.name
    validate_id(tool_name, "tool name")
    text = description or agent.config.description or f"Delegate a task to the {tool_name} agent."
    return SubAgentTool(agent, tool_name, text, resolved, spawn)
