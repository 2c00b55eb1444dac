"""Child process for the interrupt test: phase 1 raises an interrupt and exits, phase 2 answers it."""

import json
import sys

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.checkpoint import CheckpointConfig
from elsai.models import ScriptedModel
from elsai.session import FileSessionManager
from elsai.tools import ToolContext


@tool
def wire_money(amount: int, ctx: ToolContext) -> str:
    """Send money after a human approves."""
    answer = ctx.interrupt("approve_transfer", {"amount": amount})
    return "sent" if answer == "approve" else "rejected"


def build(storage: str, responses: list) -> Agent:
    return Agent(
        model=ScriptedModel(responses),
        tools=[wire_money],
        config=AgentConfig(
            agent_id="payer",
            session_manager=FileSessionManager(session_id="pay-1", storage_dir=storage),
            checkpoint=CheckpointConfig(position="both"),
        ),
    )


if __name__ == "__main__":
    phase, storage = sys.argv[1], sys.argv[2]
    if phase == "ask":
        call = {
            "role": "assistant",
            "content": [
                {"toolUse": {"toolUseId": "w1", "name": "wire_money", "input": {"amount": 500}}}
            ],
        }
        result = build(storage, [call])("Pay the invoice")
        print(
            json.dumps(
                {
                    "stop_reason": result.stop_reason,
                    "interrupts": [i.to_dict() for i in result.interrupts],
                }
            )
        )
    else:
        answer = json.loads(sys.argv[3])
        result = build(storage, ["Transfer sent."])([{"interruptResponse": answer}])
        print(
            json.dumps(
                {
                    "stop_reason": result.stop_reason,
                    "text": str(result),
                    "resumed": result.resumed_from_checkpoint,
                }
            )
        )
