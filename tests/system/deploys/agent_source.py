"""The source of the agent module the deploy tests write, deploy, rewrite and deploy again.

`agent_module(version, refund=..., refund_schema=...)` is the text of `versioned_agent.py`: the same agent, its
version baked in, with or without the `refund` tool (a deploy that removes a tool a waiting
job is inside of). Every real tool run appends a line with the version that ran it.
"""

from __future__ import annotations

_TEMPLATE = '''
import json
import os

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel
from elsai.tools import ToolContext
from elsai.types import text_of, tool_results

VERSION = {version!r}


def _ledger(entry):
    fd = os.open(os.environ["AGENT_LEDGER"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps({{**entry, "version": VERSION}}) + "\\n").encode())
    finally:
        os.close(fd)


@tool
def refund(order_id: str, ctx: ToolContext) -> str:
    """Refund an order after a human approved it.

    Args:
        order_id: The order to refund.
    """
    decision = ctx.interrupt("approve_refund", {{"order_id": order_id}})
    if decision != "approve":
        return f"Refund of order {{order_id}} rejected"
    _ledger({{"tool": "refund", "order_id": order_id, "session_id": ctx.agent.session_id}})
    return f"Refund of order {{order_id}} paid by v{{VERSION}}"


@tool(name="refund")
def refund_amount(order_id: str, amount: int, ctx: ToolContext) -> str:
    """Refund part of an order after a human approved it.

    Args:
        order_id: The order to refund.
        amount: How much to refund.
    """
    _ledger({{"tool": "refund", "order_id": order_id, "session_id": ctx.agent.session_id}})
    return f"Refunded {{amount}} of order {{order_id}}"


@tool
def process_order(order_id: str, ctx: ToolContext) -> str:
    """Process one order.

    Args:
        order_id: The order to process.
    """
    _ledger({{"tool": "process_order", "order_id": order_id, "session_id": ctx.agent.session_id}})
    return f"Processed order {{order_id}} on v{{VERSION}}"


def _turn(tool_name):
    def turn(request):
        results = [r for m in request.messages if m["role"] == "user" for r in tool_results(m)]
        orders = [c for c in text_of(request.messages[0]).split() if c.isdigit()]
        if len(results) >= len(orders):
            said = " | ".join(b.get("text", "") for r in results for b in r["content"])
            return f"v{{VERSION}} done: {{said}}"
        order = orders[len(results)]
        use = {{"toolUseId": f"{{tool_name}}-{{order}}", "name": tool_name, "input": {{"order_id": order}}}}
        return {{"role": "assistant", "content": [{{"toolUse": use}}]}}
    return turn


@tool
def approve_draft(draft: str, ctx: ToolContext) -> str:
    """Ask a human to approve a draft.

    Args:
        draft: The draft.
    """
    decision = ctx.interrupt("approve_draft", {{"draft": draft}})
    _ledger({{"tool": "approve_draft", "node": ctx.agent.agent_id, "session_id": ctx.agent.session_id}})
    return f"draft {{decision}}d on v{{VERSION}}"


def _approver_turn(request):
    results = [r for m in request.messages if m["role"] == "user" for r in tool_results(m)]
    if results:
        return "approver: " + " ".join(b.get("text", "") for b in results[-1]["content"])
    use = {{"toolUseId": "approve-1", "name": "approve_draft", "input": {{"draft": "d"}}}}
    return {{"role": "assistant", "content": [{{"toolUse": use}}]}}


def build_graph(config):
    from elsai.multiagent import GraphBuilder
    from elsai.serverless import node_config

    nodes = {{"drafter": ([], ["drafter: drafted on v" + VERSION]),
              "approver": ([approve_draft], [_approver_turn] * 10),
              "notifier": ([], ["notifier: sent on v" + VERSION])}}
    names = {graph!r}
    builder = GraphBuilder()
    for name in names:
        tools, turns = nodes[name]
        model = ScriptedModel(turns, record=False)
        builder.add_node(Agent(model=model, tools=tools, config=node_config(config, name)), name)
    for first, then in zip(names, names[1:]):
        builder.add_edge(first, then)
    return builder.set_session_manager(config.session_manager).build()


def build_agent(config: AgentConfig) -> Agent:
    if config.agent_id == "graph":
        return build_graph(config)
    if config.agent_id == "approver":
        tools = {{"same": [refund], "gone": [process_order], "amount": [refund_amount]}}[{refund!r}]
        model = ScriptedModel([_turn("refund")] * 100, record=False, model_id={model_id!r})
    else:
        tools = [process_order]
        model = ScriptedModel([_turn("process_order")] * 100, record=False)
    prompt = f"agent v{{VERSION}}" + os.environ.get("AGENT_PROMPT_SUFFIX", "")
    return Agent(model=model, tools=tools, system_prompt=prompt, config=config)
'''


def agent_module(
    version: str,
    *,
    refund: bool = True,
    refund_schema: str = "same",
    graph: tuple[str, ...] = ("drafter", "approver"),
    model_id: str = "scripted",
) -> str:
    """The text of versioned_agent.py at ``version``.

    ``refund=False`` removes that tool; ``refund_schema="amount"`` keeps its name but adds a
    required ``amount`` input (a stored call's input no longer validates). ``graph`` names the
    nodes of the "graph" job, in edge order; ``model_id`` is the approver's model id.
    """
    text = _TEMPLATE.format(version=version, refund=refund_schema if refund else "gone",
                            graph=list(graph), model_id=model_id)  # fmt: skip
    return text
