"""Crash child for the interrupt-answer path: an agent whose tool asks a person to approve.

Run as `python interrupt_answer_child.py '<json args>'`. Mode "ask" runs the first invocation
(it stops with one pending interrupt and prints its id); mode "answer" answers it with the
given responses and invocation id, with the crash matrix's write injector armed
(`child_agent.CrashInjector`: os._exit(137) before or after data write number K), so the
parent can kill the process at every write of the answer path. The tool appends
`paid <idempotency_key> <answer> <pid>` to the ledger each time it pays.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from child_agent import CrashInjector, append_line

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager, S3SessionManager
from elsai.tools import ToolContext

AGENT_ID = "payer"
FINAL_TEXT = "Invoice INV-1 handled."
PAY = {"toolUse": {"toolUseId": "pay-1", "name": "pay", "input": {"invoice": "INV-1"}}}


def reply(request: Any) -> Any:
    """The toolUse until its result is in the conversation, then the final text."""
    answered = any(
        "toolResult" in b for m in request.messages if m["role"] == "user" for b in m["content"]
    )
    return FINAL_TEXT if answered else {"role": "assistant", "content": [PAY]}


def build(args: dict[str, Any], crash: dict[str, Any] | None) -> Agent:
    if args["backend"] == "file":
        manager: Any = FileSessionManager(
            session_id=args["session_id"], storage_dir=args["storage_dir"]
        )
    else:
        manager = S3SessionManager(
            session_id=args["session_id"], bucket=args["bucket"], prefix=args["prefix"]
        )
    manager.overlap_after_model = False  # every write in one order, numbered by the injector
    manager.storage = CrashInjector(manager.storage, args["writes"], crash)
    ledger = args["ledger"]

    @tool
    def pay(invoice: str, ctx: ToolContext) -> str:
        """Pay an invoice once a person approves it."""
        answer = ctx.interrupt("approve_payment", {"invoice": invoice})
        append_line(ledger, f"paid {ctx.idempotency_key} {answer} {os.getpid()}")
        return f"{invoice}: {answer}"

    return Agent(
        model=ScriptedModel([reply] * 8),
        tools=[pay],
        config=AgentConfig(
            agent_id=AGENT_ID,
            session_manager=manager,
            checkpoint=CheckpointConfig(position="both"),
        ),
    )


def main(argv: list[str]) -> int:
    args = json.loads(argv[1])
    if args["mode"] == "ask":
        result = build(args, None)("Pay invoice INV-1.", invocation_id="ask-1")
        print(
            json.dumps(
                {"stop_reason": result.stop_reason, "ids": [i.id for i in result.interrupts]}
            )
        )
        return 0
    answers = [{"interruptResponse": r} for r in args["answers"]]
    result = build(args, args.get("crash"))(answers, invocation_id=args["invocation_id"])
    print(json.dumps({"stop_reason": result.stop_reason, "text": str(result)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
