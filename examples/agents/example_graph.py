"""The example multi-agent job: a researcher, two writers in parallel, an editor.

`build_graph(config)` is an agent factory that returns a Graph instead of an Agent: one job
session (the orchestrator's cursor in multi_agent.json), one node agent per name with its
own messages and checkpoint (`elsai.serverless.node_config`). The state machine runs each
ready node in its own Lambda slices; the two writers run at the same time. Offline, scripted
models play the LLMs (each decides its turn from the conversation, as a rebuilt agent must);
with ELSAI_MODEL=bedrock every node uses Amazon Bedrock.

    elsai local run --example graph "Write a short piece about otters"
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.models.base import ModelRequest
from elsai.multiagent import Graph, GraphBuilder
from elsai.serverless import node_config
from elsai.tools import ToolContext
from elsai.types import text_of, tool_results

PROMPTS = {
    "researcher": "Collect three facts about the topic with the research tool, then list them.",
    "writer_a": "Write the opening paragraph from the research, using write_section once.",
    "writer_b": "Write the closing paragraph from the research, using write_section once.",
    "editor": "Join the writers' sections into one short piece.",
}


@tool
def research(topic: str) -> str:
    """Look up facts about a topic.

    Args:
        topic: What to research.
    """
    return f"facts about {topic}: it swims; it is social; it uses tools"


@tool
def write_section(part: str, ctx: ToolContext) -> str:
    """Write one section of the piece (slow: a few seconds of drafting).

    Args:
        part: "opening" or "closing".
    """
    time.sleep(float(os.environ.get("ELSAI_EXAMPLE_TOOL_SECONDS", "2")))
    return f"{part} section drafted ({ctx.idempotency_key[:8]})"


def _first_text(request: ModelRequest) -> str:
    return text_of(next(m for m in request.messages if m["role"] == "user"))


def _turn(node: str, tool_name: str, inputs: Callable[[str], dict[str, Any]]) -> Any:
    """One tool call, then an answer built from its result (stateless: read from the messages)."""

    def turn(request: ModelRequest) -> dict[str, Any] | str:
        done = [r for m in request.messages if m["role"] == "user" for r in tool_results(m)]
        if not done:
            use = {
                "toolUseId": f"{node}-1",
                "name": tool_name,
                "input": inputs(_first_text(request)),
            }
            return {
                "role": "assistant",
                "content": [{"text": f"{node} working."}, {"toolUse": use}],
            }
        return f"[{node}] " + " ".join(b.get("text", "") for b in done[-1]["content"])

    return turn


def _editor(request: ModelRequest) -> str:
    lines = [line for line in _first_text(request).splitlines() if line.startswith("[writer")]
    return "Final piece: " + " / ".join(sorted(lines))


def _model(turn: Any) -> Any:
    if os.environ.get("ELSAI_MODEL", "scripted") == "bedrock":
        from elsai.models import BedrockModel

        return BedrockModel(
            **(
                {"model_id": os.environ["ELSAI_MODEL_ID"]}
                if os.environ.get("ELSAI_MODEL_ID")
                else {}
            )
        )
    from elsai.models import ScriptedModel

    return ScriptedModel([turn] * 100, record=False)


def build_graph(config: AgentConfig) -> Graph:
    """researcher -> (writer_a, writer_b) -> editor, every node in the job's session."""
    topic = lambda text: {"topic": text.splitlines()[0][:80]}  # noqa: E731
    turns: dict[str, tuple[Any, list[Any]]] = {
        "researcher": (_turn("researcher", "research", topic), [research]),
        "writer_a": (
            _turn("writer_a", "write_section", lambda _: {"part": "opening"}),
            [write_section],
        ),
        "writer_b": (
            _turn("writer_b", "write_section", lambda _: {"part": "closing"}),
            [write_section],
        ),
        "editor": (_editor, []),
    }
    builder = GraphBuilder()
    for name, (turn, tools) in turns.items():
        agent = Agent(
            model=_model(turn),
            tools=tools,
            system_prompt=PROMPTS[name],
            config=node_config(config, name),
        )
        builder.add_node(agent, name)
    for source, target in [
        ("researcher", "writer_a"),
        ("researcher", "writer_b"),
        ("writer_a", "editor"),
        ("writer_b", "editor"),
    ]:
        builder.add_edge(source, target)
    assert config.session_manager is not None  # the runtime always passes the job's session
    return builder.set_session_manager(config.session_manager).build()
