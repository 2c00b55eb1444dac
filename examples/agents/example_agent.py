"""The example agent the stack deploys by default: an order-fulfilment worker.

`build_agent(config)` is the factory contract: the runtime passes an AgentConfig carrying the
S3 session and checkpoint settings; the factory adds model, tools and prompt. With
ELSAI_MODEL=scripted (the default offline) a scripted model plays the LLM; with
ELSAI_MODEL=bedrock the agent uses Amazon Bedrock.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.conversation import SlidingWindowConversationManager
from elsai.models.base import ModelRequest
from elsai.tools import ToolContext
from elsai.types import tool_results

SYSTEM_PROMPT = (
    "You fulfil orders. Call process_order once per order id, then summarise what you did."
)


@tool
def process_order(order_id: str, ctx: ToolContext) -> str:
    """Process one order by id. Idempotent: re-running it for the same call changes nothing.

    Args:
        order_id: The order to process.
    """
    delay = float(os.environ.get("ELSAI_EXAMPLE_TOOL_SECONDS", "0"))
    if delay:
        time.sleep(delay)
    return f"Processed order {order_id} (confirmation {ctx.idempotency_key[:8]})"


def _orders_in(prompt: str) -> list[str]:
    return re.findall(r"\d+", prompt) or ["1"]


def _current_prompt(messages: list[dict[str, Any]]) -> tuple[int, str]:
    """The prompt the agent is working on: the latest one naming orders, else the first.

    A later turn on the same session ("Process orders 21 and 22") is worked on by itself; a
    nudge without order ids ("continue") keeps working on the prompt before it.
    """
    prompts = [
        (i, b["text"])
        for i, m in enumerate(messages)
        if m["role"] == "user"
        for b in m["content"]
        if "text" in b
    ]
    with_orders = [p for p in prompts if re.search(r"\d", p[1])]
    return with_orders[-1] if with_orders else prompts[0]


def scripted_turn(request: ModelRequest) -> dict[str, Any] | str:
    """A deterministic stand-in for the LLM: one process_order call per order, then a summary."""
    start, prompt = _current_prompt(request.messages)
    orders = _orders_in(prompt)
    done = sum(len(tool_results(m)) for m in request.messages[start:] if m["role"] == "user")
    if done < len(orders):
        order = orders[done]
        return {
            "role": "assistant",
            "content": [
                {"text": f"Processing order {order}."},
                {
                    "toolUse": {
                        "toolUseId": f"order-{order}-{start + done}",
                        "name": "process_order",
                        "input": {"order_id": order},
                    }
                },
            ],
        }
    return f"All {len(orders)} orders processed: {', '.join(orders)}."


class _ScriptedLLM:
    """Builds a scripted model whose every call is answered by `scripted_turn`."""

    @staticmethod
    def build() -> Any:
        from elsai.models import ScriptedModel

        return ScriptedModel([scripted_turn] * 10_000, record=False)


def build_agent(config: AgentConfig) -> Agent:
    if os.environ.get("ELSAI_MODEL", "scripted") == "bedrock":
        from elsai.models import BedrockModel

        options: dict[str, Any] = {}
        if os.environ.get("ELSAI_MODEL_ID"):
            options["model_id"] = os.environ["ELSAI_MODEL_ID"]
        if os.environ.get("ELSAI_MODEL_READ_TIMEOUT_SECONDS"):
            # The same number the stop margin was sized with at synth time (docs/operations.md).
            options["read_timeout"] = float(os.environ["ELSAI_MODEL_READ_TIMEOUT_SECONDS"])
        model: Any = BedrockModel(**options)
    else:
        model = _ScriptedLLM.build()
    if config.conversation_manager is None:
        # The scripted stand-in reads the order list from the prompt it works on, so it keeps a
        # window large enough to still see it on long jobs.
        config.conversation_manager = SlidingWindowConversationManager(window_size=400)
    return Agent(model=model, tools=[process_order], system_prompt=SYSTEM_PROMPT, config=config)
