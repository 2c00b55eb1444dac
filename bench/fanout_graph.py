"""A fan-out Graph of any size, for the multi-agent scale measurement and its test.

planner -> writer_01 .. writer_<n-2> (in parallel) -> editor. Every node does one tool call
and then answers, the way a real node's slice reads and writes its own session; each model
decides its turn from the conversation it is given (a rebuilt agent is stateless).
The size comes from the job's agent_id, "fanout-<n>", so one factory serves every size.
"""

from __future__ import annotations

from typing import Any

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel
from elsai.models.base import ModelRequest
from elsai.multiagent import GraphBuilder
from elsai.serverless import node_config
from elsai.types import tool_results


@tool
def note(text: str) -> str:
    """Write down one line of the node's work.

    Args:
        text: The line.
    """
    return f"noted {text}"


def _turn(name: str) -> Any:
    def turn(request: ModelRequest) -> dict[str, Any] | str:
        if any(tool_results(m) for m in request.messages if m["role"] == "user"):
            return f"[{name} done]"
        use = {"toolUseId": f"{name}-note", "name": "note", "input": {"text": name}}
        return {"role": "assistant", "content": [{"toolUse": use}]}

    return turn


def writer_names(size: int) -> list[str]:
    """The parallel writers of a `size`-node fan-out graph."""
    return [f"writer_{i:02d}" for i in range(1, size - 1)]


def build_agent(config: AgentConfig) -> Any:
    """The factory: agent_id "fanout-<n>" builds the n-node fan-out graph on the job's session."""
    size = int(config.agent_id.removeprefix("fanout-"))
    if size < 3:
        raise ValueError(f"a fan-out graph needs at least 3 nodes, not {size}")
    builder = GraphBuilder()
    names = ["planner", *writer_names(size), "editor"]
    for name in names:
        model = ScriptedModel([_turn(name)] * 4, record=False)
        builder.add_node(Agent(model=model, tools=[note], config=node_config(config, name)), name)
    for writer in writer_names(size):
        builder.add_edge("planner", writer)
        builder.add_edge(writer, "editor")
    assert config.session_manager is not None
    return builder.set_session_manager(config.session_manager).build()
