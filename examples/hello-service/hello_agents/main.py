"""The factory DurableAgentService names: ``factory="hello_agents.main:build"``.

The runtime calls ``build(config)`` for every slice with an AgentConfig carrying the S3 session
and checkpoint settings; the factory adds the model, the tools and the prompt. Deployed, the
construct sets ELSAI_MODEL=bedrock and ELSAI_MODEL_ID; anywhere else a scripted model plays the
LLM, so the test and the local runtime run offline.
"""

from __future__ import annotations

import os
from typing import Any

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.models.base import ModelRequest
from elsai.types import tool_results

SYSTEM_PROMPT = "You greet people. Call greet once with the person's name, then say what you did."


@tool
def greet(name: str) -> str:
    """Greet one person by name.

    Args:
        name: Who to greet.
    """
    return f"Hello, {name}!"


def scripted_turn(request: ModelRequest) -> dict[str, Any] | str:
    """Offline stand-in for the model: greet the last word of the prompt, then report."""
    results = [r for m in request.messages if m["role"] == "user" for r in tool_results(m)]
    if results:
        return f"Done: {results[-1]['content'][0]['text']}"
    prompt = next(b["text"] for b in request.messages[0]["content"] if "text" in b)
    name = prompt.rstrip(".!? ").split()[-1]
    call = {"toolUseId": "greet-1", "name": "greet", "input": {"name": name}}
    return {"role": "assistant", "content": [{"toolUse": call}]}


def _model() -> Any:
    if os.environ.get("ELSAI_MODEL") == "bedrock":
        from elsai.models import BedrockModel

        return BedrockModel(model_id=os.environ["ELSAI_MODEL_ID"])
    from elsai.models import ScriptedModel

    return ScriptedModel([scripted_turn] * 100, record=False)


def build(config: AgentConfig) -> Agent:
    """The agent for one slice, built with the config the runtime passes."""
    return Agent(model=_model(), tools=[greet], system_prompt=SYSTEM_PROMPT, config=config)
