"""Child process for the real-process crash tests (run by test_crash.py, from the repo root).

    python -m tests.unit.multiagent.crash_child <scenario> <phase> <storage_dir> <ledger_file>

Phase 1 builds the orchestrator and dies (SIGKILL inside a tool, or os._exit right before a
multi_agent.json write). Phase 2 rebuilds everything with the same ids, runs it to the end
and prints a JSON summary on its last stdout line. Every model call and tool run is appended
to the ledger file, which survives the kill.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from elsai import Agent, tool
from elsai.models.base import ModelRequest
from elsai.multiagent import GraphBuilder, MultiAgentResult, Swarm
from elsai.session import FileSessionManager
from tests.unit.multiagent.helpers import HookedStorage, agent, handoff, model_of, tool_call

SESSION = "job-9"
RESEARCH_NOTE = "Research note: Sunny, 72F in Paris."


def main(scenario: str, phase: int, store: Path, ledger_path: Path) -> None:
    def log(event: str, **fields: Any) -> None:
        with open(ledger_path, "a") as f:
            f.write(json.dumps({"phase": phase, "event": event, **fields}) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def logged(agent_name: str, response: Any) -> Any:
        def respond(request: ModelRequest) -> Any:
            log("model", agent=agent_name)
            return response

        return respond

    @tool
    def get_weather(city: str) -> str:
        """Return weather for a city."""
        log("tool", name="get_weather")
        return f"Sunny, 72F in {city}"

    @tool
    def publish(note: str) -> str:
        """Publish a note (the process is killed inside the first run)."""
        log("tool", name="publish")
        if phase == 1 and scenario.endswith("tool_kill"):
            os.kill(os.getpid(), signal.SIGKILL)
        return f"published: {note}"

    def node(agent_id: str, responses: list[Any], tools: list[Any]) -> Agent:
        return agent(
            agent_id,
            [logged(agent_id, r) for r in responses],
            tools=tools,
            store=store,
            session_id=SESSION,
        )

    first = phase == 1
    researcher_script: list[Any] = [tool_call("t1", "get_weather", city="Paris")]
    if scenario.startswith("swarm"):
        researcher_script.append(
            handoff("h1", "writer", "publish the note", {"note": RESEARCH_NOTE})
        )
    else:
        researcher_script.append(RESEARCH_NOTE)
    researcher = node("researcher", researcher_script if first else [], [get_weather])
    writer_script: list[Any] = [tool_call("p1", "publish", note="sunny")] if first else []
    if not (first and scenario.endswith("tool_kill")):
        writer_script.append("Published: it is sunny in Paris.")
    writer = node("writer", writer_script, [publish])

    manager = FileSessionManager(session_id=SESSION, storage_dir=str(store))
    if first and scenario == "graph_write_kill":

        def exit_before_second_cursor_write(key: str, nth: int) -> None:
            if key.endswith("multi_agent.json") and nth == 2:
                log("exit_before_cursor_write")
                os._exit(3)

        manager.storage = HookedStorage(manager.storage, exit_before_second_cursor_write)

    orchestrator: Any
    if scenario.startswith("swarm"):
        orchestrator = Swarm(
            [researcher, writer], entry_point="researcher", session_manager=manager
        )
    else:
        builder = GraphBuilder().add_node(researcher, "researcher").add_node(writer, "writer")
        builder.add_edge("researcher", "writer").set_entry_point("researcher").set_session_manager(
            manager
        )
        orchestrator = builder.build()

    result: MultiAgentResult = orchestrator(
        "What's the weather in Paris? Use get_weather, then summarize."
    )
    summary = {
        "status": str(result.status),
        "error": result.error,
        "resumed": result.resumed,
        "text": result.text,
        "order": getattr(result, "execution_order", None) or getattr(result, "node_history", None),
        "usage": dict(result.accumulated_usage),
        "model_calls": {"researcher": model_of(researcher).calls, "writer": model_of(writer).calls},
        "nodes": {
            name: {
                "status": str(r.status),
                "text": r.text,
                "restored": r.restored,
                "resumed_from_checkpoint": r.resumed_from_checkpoint,
                "resume_position": getattr(r.result, "resume_position", None),
                "usage": dict(r.usage),
            }
            for name, r in result.results.items()
        },
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]))
