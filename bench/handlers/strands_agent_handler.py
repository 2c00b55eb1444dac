"""A strands-agents Lambda handler of the same shape as lambdas/agent_handler.py (bench only).

Copied into the strands bundle as ``agent_handler.py`` by bench/cold_start_bench.py: Powertools
Logger and Metrics, the SDK's agent, its S3 session manager and one tool, everything imported
at module level as strands' own Lambda examples do. Not part of the product.
"""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from strands import Agent, tool
from strands.session.s3_session_manager import S3SessionManager

logger = Logger()
metrics = Metrics()


@tool
def process_order(order_id: str) -> str:
    """Process one order by id.

    Args:
        order_id: The order to process.
    """
    return f"Processed order {order_id}"


@logger.inject_lambda_context(log_event=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    manager = S3SessionManager(
        session_id=event["session_id"], bucket=os.environ["ELSAI_SESSIONS_BUCKET"]
    )
    agent = Agent(tools=[process_order], session_manager=manager, agent_id=event["agent_id"])
    result = agent(event["prompt"])
    return {"status": "completed", "text": str(result)}
