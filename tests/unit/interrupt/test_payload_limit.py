"""An interrupt too large for a job's state is refused before the session waits for it.

A job that fails with InterruptPayloadTooLargeError says "the session is intact: fix the tool
and resume it"; so the next job on the same session, with the tool fixed, must run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel
from elsai.serverless.errors import MAX_INTERRUPTS_BYTES, InterruptPayloadTooLargeError
from elsai.serverless.slice import SliceRequest, run_slice
from elsai.session import FileSessionManager
from elsai.tools import ToolContext


def _call(use_id: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"toolUse": {"toolUseId": use_id, "name": "refund", "input": {"order": 7}}}],
    }


def _factory(reason: Any, replies: list[Any]) -> Any:
    @tool
    def refund(order: int, tool_context: ToolContext) -> str:
        """Refund one order after a person approves it."""
        answer = tool_context.interrupt("approve_refund", reason)
        return f"refunded {order}: {answer}"

    def build(config: AgentConfig) -> Agent:
        return Agent(model=ScriptedModel(list(replies)), tools=[refund], config=config)

    return build


def _slice(manager: FileSessionManager, factory: Any, job: str, **kw: Any) -> Any:
    request = SliceRequest(
        job_id=job, execution_id=f"exec-{job}", session_id="s1", agent_id="agent", **kw
    )
    return run_slice(
        request, session_manager=manager, factory=factory, remaining_ms=lambda: 600_000
    )


def test_an_oversized_interrupt_fails_the_job_and_the_next_job_on_the_session_runs(
    tmp_path: Path,
) -> None:
    manager = FileSessionManager(session_id="s1", storage_dir=str(tmp_path))
    huge = {"invoice": "x" * (MAX_INTERRUPTS_BYTES + 1)}
    with pytest.raises(InterruptPayloadTooLargeError, match="session is intact"):
        _slice(manager, _factory(huge, [_call("t1")]), "job-1", prompt="Refund order 7")
    agent_json = tmp_path / "session_s1/agents/agent_agent/agent.json"
    assert '"pending"' not in agent_json.read_text()  # the session is not left waiting

    fixed = _factory({"invoice": "INV-7"}, ["Refund 7 done."])
    manager = FileSessionManager(session_id="s1", storage_dir=str(tmp_path))
    asked = _slice(manager, fixed, "job-2", prompt="Refund order 7 again")
    assert asked.status == "interrupted"
    (interrupt,) = asked.interrupts
    assert interrupt["reason"] == {"invoice": "INV-7"}
    answers = [{"interruptId": interrupt["id"], "response": "approved"}]
    manager = FileSessionManager(session_id="s1", storage_dir=str(tmp_path))
    done = _slice(manager, fixed, "job-2", interrupt_responses=answers, slice=1)
    assert done.status == "completed" and done.text == "Refund 7 done."
    # The pending refund of job 1 ran once, with the fixed tool and the answer given.
    results = [
        block["toolResult"]
        for message in _stored(tmp_path)
        for block in message["content"]
        if "toolResult" in block
    ]
    assert [(r["toolUseId"], r["content"][0]["text"]) for r in results] == [
        ("t1", "refunded 7: approved")
    ]


def _stored(root: Path) -> list[dict[str, Any]]:
    folder = root / "session_s1/agents/agent_agent/messages"
    files = sorted(folder.iterdir(), key=lambda f: int(f.stem.split("_")[1]))
    return [json.loads(f.read_text())["message"] for f in files]
