"""Agent factories for the console's browser tests (imported by the Lambda children).

- "xss": a tool whose output (and the model's answer) is hostile HTML, to show it stays text;
- "graph", "graph-ask", "graph-fail", "swarm": the multi-agent test jobs (ma_agents);
- anything else: the serverless tests' agents ("approver" asks a human; the order agent).
"""

from __future__ import annotations

from typing import Any

import ma_agents
import serverless_agents
from hostile import HOSTILE

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel
from elsai.models.base import ModelRequest
from elsai.types import tool_results


@tool
def fetch_page(url: str) -> str:
    """Fetch a web page (returns hostile HTML).

    Args:
        url: The page.
    """
    return HOSTILE


def _xss_turn(request: ModelRequest) -> dict[str, Any] | str:
    if any(tool_results(m) for m in request.messages if m["role"] == "user"):
        return "<script>window.__xss=4</script>The page said what it said."
    return {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": "fetch-1", "name": "fetch_page",
                     "input": {"url": "<script>window.__xss=5</script>"}}},
    ]}  # fmt: skip


def build_agent(config: AgentConfig) -> Any:
    if config.agent_id == "xss":
        return Agent(model=ScriptedModel([_xss_turn] * 10, record=False), tools=[fetch_page],
                     config=config)  # fmt: skip
    if config.agent_id in ("graph", "graph-ask", "graph-fail", "swarm"):
        return ma_agents.build_agent(config)
    return serverless_agents.build_agent(config)
