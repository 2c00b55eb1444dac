"""The LangGraph peer: its prebuilt ReAct agent with `SqliteSaver` and `durability="sync"`.

Runs only in its own venv (`.venv-langgraph`, pinned by bench/langgraph.lock; bench/run.sh
creates it), never next to elsai: `bench.files_durable` starts it as a child process,

    .venv-langgraph/bin/python -m bench.langgraph_side --cycles 100 --dir /tmp/x

which prints one JSON line: the invocation's wall time and the cycles it ran. The workload is
bench/workload.py's: every scripted model answer is one tool call of `bump`, then a final text.
SQLite runs as `SqliteSaver` sets it up (WAL journal, the default `synchronous=FULL`), so every
commit is fsynced: power-loss durable, like elsai's default `fsync=True`.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import time
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.prebuilt import create_react_agent

from bench import workload


class ScriptedChatModel(BaseChatModel):
    """Answers from a fixed list: each answer one `bump` tool call, the last a final text."""

    cycles: int
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "elsai-bench-scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:  # type: ignore[override]
        """The script already names the tool; binding changes nothing."""
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, **kwargs: Any) -> ChatResult:
        i = self.calls
        self.calls += 1
        if i < self.cycles:
            message = AIMessage(
                content="",
                tool_calls=[
                    {"id": f"tooluse_{i:06d}", "name": workload.TOOL_NAME, "args": {"n": i}}
                ],
            )
        else:
            message = AIMessage(content=workload.FINAL_TEXT)
        return ChatResult(generations=[ChatGeneration(message=message)])


@tool(workload.TOOL_NAME)
def bump(n: int) -> str:
    """Bump a counter."""
    return workload.bump_impl(n)


def run(cycles: int, directory: str, thread_id: str = "bench") -> dict[str, Any]:
    """One invocation of `cycles` tool cycles on a fresh SQLite file in `directory`."""
    conn = sqlite3.connect(os.path.join(directory, "checkpoints.sqlite"), check_same_thread=False)
    try:
        saver = SqliteSaver(conn)
        saver.setup()
        agent = create_react_agent(ScriptedChatModel(cycles=cycles), [bump], checkpointer=saver)
        config = {"configurable": {"thread_id": thread_id}, "recursion_limit": 4 * cycles + 10}
        started = time.perf_counter()
        out = agent.invoke({"messages": [("user", workload.PROMPT)]}, config, durability="sync")
        elapsed = time.perf_counter() - started
        synchronous = conn.execute("PRAGMA synchronous").fetchone()[0]
        journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        conn.close()
    if len(out["messages"]) != workload.messages_written(cycles):
        raise RuntimeError(f"langgraph ran {len(out['messages'])} messages, not a full script")
    return {"total_s": elapsed, "cycles": cycles, "synchronous": synchronous, "journal": journal}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--warmup", action="store_true", help="one untimed run first")
    args = parser.parse_args(argv)
    if args.warmup:
        warm = os.path.join(args.dir, "warmup")
        os.makedirs(warm, exist_ok=True)
        run(5, warm)
    timed = os.path.join(args.dir, "timed")
    os.makedirs(timed, exist_ok=True)
    os.sync()
    print(json.dumps(run(args.cycles, timed)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
