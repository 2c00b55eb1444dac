"""The factory DurableAgentService names: ``factory="support_desk.main:build"``.

``build(config)`` returns a Graph, triage -> resolver, in the job's session. The resolver looks
the order up through the bundled MCP server (``orders_server.py``, started with
``sys.executable``) and refunds only after a human approves (``ctx.interrupt``): the job waits
in WAITING_FOR_INPUT until the answer is posted. Deployed, ELSAI_MODEL=bedrock gives every node
Amazon Bedrock; anywhere else scripted models play the LLMs, so tests and local runs are offline.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.models.base import ModelRequest
from elsai.multiagent import Graph, GraphBuilder
from elsai.serverless import node_config
from elsai.tools import ToolContext
from elsai.tools.mcp import MCPClient
from elsai.types import text_of, tool_results

SERVER = Path(__file__).resolve().parent / "orders_server.py"
PROMPTS = {
    "triage": "Classify the customer's request and name the order it is about.",
    "resolver": "Look the order up with lookup_order; refund it with issue_refund if it is damaged.",
}


@tool
def issue_refund(order_id: str, amount: int, ctx: ToolContext) -> str:
    """Refund an order, once a human has approved it.

    Args:
        order_id: The order to refund.
        amount: How much to refund.
        ctx: The call's context, which asks the human (elsai passes it; not a model input).
    """
    decision = ctx.interrupt("approve_refund", {"order_id": order_id, "amount": amount})
    if isinstance(decision, dict) and decision.get("approved") is True:
        return f"refunded {amount} for order {order_id}"
    return f"refund for order {order_id} declined"


def _task(request: ModelRequest) -> str:
    return text_of(next(m for m in request.messages if m["role"] == "user"))


def _call(tool_use_id: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    use = {"toolUseId": tool_use_id, "name": name, "input": inputs}
    return {"role": "assistant", "content": [{"toolUse": use}]}


def triage_turn(request: ModelRequest) -> str:
    """Offline triage: a refund request about the order number in the message."""
    match = re.search(r"\b(\d{4})\b", _task(request))
    return f"refund request for order {match.group(1) if match else 'unknown'}"


def resolver_turn(request: ModelRequest) -> dict[str, Any] | str:
    """Offline resolver, decided from the conversation (as a rebuilt agent must)."""
    results = [r for m in request.messages if m["role"] == "user" for r in tool_results(m)]
    if not results:
        match = re.search(r"order (\d{4})", _task(request))
        return _call("lookup-1", "lookup_order", {"order_id": match.group(1) if match else ""})
    last = results[-1]["content"][0]["text"]
    if len(results) == 1:
        order = json.loads(last)
        if "damaged" not in order.get("status", ""):
            return f"Resolved: order {order['order_id']} needs no refund ({order.get('status')})"
        inputs = {"order_id": order["order_id"], "amount": order["amount"]}
        return _call("refund-1", "issue_refund", inputs)
    return f"Resolved: {last}"


def _model(turn: Any) -> Any:
    if os.environ.get("ELSAI_MODEL") == "bedrock":
        from elsai.models import BedrockModel

        return BedrockModel(model_id=os.environ["ELSAI_MODEL_ID"])
    from elsai.models import ScriptedModel

    return ScriptedModel([turn] * 100, record=False)


def orders_mcp() -> MCPClient:
    """The bundled orders server as a subprocess of this interpreter (the Lambda's, deployed)."""
    return MCPClient.stdio(sys.executable, [str(SERVER)])


def build(config: AgentConfig) -> Graph:
    """The graph triage -> resolver, both in the job's session (each its own messages and checkpoint)."""
    triage = Agent(
        model=_model(triage_turn),
        system_prompt=PROMPTS["triage"],
        config=node_config(config, "triage"),
    )
    resolver = Agent(
        model=_model(resolver_turn),
        tools=[orders_mcp(), issue_refund],
        system_prompt=PROMPTS["resolver"],
        config=node_config(config, "resolver"),
    )
    builder = GraphBuilder().add_node(triage, "triage").add_node(resolver, "resolver")
    builder.add_edge("triage", "resolver").set_entry_point("triage")
    assert config.session_manager is not None  # the runtime always passes the job's session
    return builder.set_session_manager(config.session_manager).build()
