"""Agent factories for the serverless end-to-end tests (imported by the Lambda children).

`build_agent` picks by agent_id so one LocalRuntime serves every test:
- "approver": a refund tool that asks a human (`ctx.interrupt`) before refunding;
- anything else: the example order agent's scripted model with a `process_order` tool whose
  side effect is one line appended to the ledger file named by AGENT_LEDGER, so tests
  count real executions across killed and retried processes.
"""

from __future__ import annotations

import json
import os
from typing import Any

from example_agent import SYSTEM_PROMPT, scripted_turn

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.conversation import SlidingWindowConversationManager
from elsai.models import ScriptedModel
from elsai.models.base import ModelRequest
from elsai.tools import ToolContext
from elsai.types import text_of, tool_results


def _ledger(entry: dict[str, Any]) -> None:
    fd = os.open(os.environ["AGENT_LEDGER"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:  # one write() on an O_APPEND fd: complete even if the process is killed right after
        os.write(fd, (json.dumps(entry) + "\n").encode())
    finally:
        os.close(fd)


@tool
def process_order(order_id: str, ctx: ToolContext) -> str:
    """Process one order by id.

    Args:
        order_id: The order to process.
    """
    _ledger({"tool": "process_order", "order_id": order_id, "session_id": ctx.agent.session_id,
             "tool_use_id": ctx.tool_use_id, "pid": os.getpid()})  # fmt: skip
    return f"Processed order {order_id}"


@tool
def refund(order_id: str, ctx: ToolContext) -> str:
    """Refund an order, after a human approved it.

    Args:
        order_id: The order to refund.
    """
    decision = ctx.interrupt("approve_refund", {"order_id": order_id})
    if decision != "approve":
        return f"Refund of order {order_id} rejected ({decision})"
    _ledger(
        {
            "tool": "refund",
            "order_id": order_id,
            "session_id": ctx.agent.session_id,
            "pid": os.getpid(),
        }
    )
    return f"Refund of order {order_id} approved and paid"


def approval_turn(request: ModelRequest) -> dict[str, Any] | str:
    """Ask for one refund, then report the tool's answer."""
    results = [r for m in request.messages if m["role"] == "user" for r in tool_results(m)]
    if results:
        return "Done: " + " ".join(b.get("text", "") for b in results[-1]["content"])
    prompt = text_of(request.messages[0])
    order = "".join(c for c in prompt if c.isdigit()) or "1"
    return {"role": "assistant", "content": [
        {"text": f"Refunding order {order}."},
        {"toolUse": {"toolUseId": f"refund-{order}", "name": "refund", "input": {"order_id": order}}},
    ]}  # fmt: skip


def build_agent(config: AgentConfig) -> Agent:
    if config.agent_id == "approver":
        return Agent(
            model=ScriptedModel([approval_turn] * 100, record=False), tools=[refund], config=config
        )
    # The example's scripted "LLM" reads the order list from the prompt, so the prompt must
    # stay in the window for jobs of more than ~19 orders (the default window is 40 messages).
    config.conversation_manager = SlidingWindowConversationManager(window_size=400)
    model = ScriptedModel([scripted_turn] * 10_000, record=False)
    return Agent(model=model, tools=[process_order], system_prompt=SYSTEM_PROMPT, config=config)
