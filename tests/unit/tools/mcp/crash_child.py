"""Crash-test child: an agent whose only tool is an MCP server's `record`, killed mid call.

Run as `python crash_child.py '<json args>'` with keys: backend ("file"|"s3"), where (a
directory or a bucket), log and block (the server's MCP_TEST_LOG / MCP_TEST_BLOCK files).
The agent is rebuilt the same way every time (same ids, same client config), as a restarted
worker would. It prints one JSON line with the AgentResult flags and its tool names.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from elsai import Agent
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.models.base import ModelRequest
from elsai.session import FileSessionManager, S3SessionManager
from elsai.session.manager import SessionManager
from elsai.tools.mcp import MCPClient

SERVER = str(Path(__file__).with_name("server.py"))
SESSION_ID, AGENT_ID = "mcp-job-1", "mcp-worker"
FINAL = "order 42 recorded"


def decide(request: ModelRequest) -> str | dict[str, Any]:
    """Ask for the one MCP call until its result is in the conversation, then answer."""
    answered = any(
        "toolResult" in block for message in request.messages for block in message["content"]
    )
    if answered:
        return FINAL
    use = {"toolUseId": "rec-1", "name": "orders_record", "input": {"note": "order-42"}}
    return {"role": "assistant", "content": [{"toolUse": use}]}


def build(args: dict[str, Any]) -> Agent:
    manager: SessionManager
    if args["backend"] == "file":
        manager = FileSessionManager(session_id=SESSION_ID, storage_dir=args["where"])
    else:
        manager = S3SessionManager(session_id=SESSION_ID, bucket=args["where"], prefix="mcp/")
    client = MCPClient.stdio(
        sys.executable,
        [SERVER, "stdio"],
        env={"MCP_TEST_LOG": args["log"], "MCP_TEST_BLOCK": args["block"]},
        prefix="orders_",
        allow={"record"},
    )
    config = AgentConfig(
        agent_id=AGENT_ID,
        session_manager=manager,
        checkpoint=CheckpointConfig(position="both"),
    )
    return Agent(model=ScriptedModel([decide, decide]), tools=[client], config=config)


def main() -> None:
    args = json.loads(sys.argv[1])
    with build(args) as agent:
        result = agent("Record order 42.")
        line = {
            "resumed": result.resumed_from_checkpoint,
            "position": result.resume_position,
            "text": str(result),
            "tools": agent.tool_names,
        }
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
