"""Graph and Swarm factories for the multi-agent serverless tests (imported by the Lambda children).

Every Lambda rebuilds the orchestrator from scratch, so each scripted model decides its turn
from the conversation it is given (stateless), never from a call counter. `build_agent` picks
the job's shape by the job's agent_id:
- "graph": researcher -> (writer_a, writer_b in parallel) -> editor;
- "graph-fail": researcher -> broken (its model always raises);
- "graph-ask": drafter -> approver (its tool asks a human through an interrupt);
- "graph-two-asks": drafter -> (approver_a -> publish_a, approver_b -> publish_b) -> summary:
  two parallel branches that each ask a human, each followed by a node of its own;
- "graph-ask-beside-work": start -> (approver_a -> publish_a, w1 -> w2): one branch asks a
  human while the other keeps working;
- "swarm": triage -> specialist -> closer, by two handoffs;
- "swarm-ask": triage hands off to an approver that asks a human.
Each tool run appends one line to the ledger named by AGENT_LEDGER (node, tool, start/end times),
so tests count side effects across killed and retried processes. With MA_SPANS set, the
process's global tracer provider (what an OpenTelemetry layer sets up in a real Lambda) appends
every ended span to that file (set up when the module is imported).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

from elsai import Agent, tool
from elsai.agent import AgentConfig
from elsai.models import ScriptedModel
from elsai.models.base import ModelRequest
from elsai.multiagent import GraphBuilder, Swarm
from elsai.serverless import node_config
from elsai.tools import ToolContext
from elsai.types import text_of, tool_results

Turn = Callable[[ModelRequest], dict[str, Any] | str]


def _append(path: str, entry: dict[str, Any]) -> None:
    # one write() on an O_APPEND fd: complete even if the process is killed right after
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(entry) + "\n").encode())
    finally:
        os.close(fd)


def _ledger(entry: dict[str, Any]) -> None:
    _append(os.environ["AGENT_LEDGER"], entry)


@tool
def work(step: str, ctx: ToolContext) -> str:
    """Do one step of a node's work (a side effect in the ledger).

    Args:
        step: Which step.
    """
    started = time.time()
    time.sleep(float(os.environ.get("MA_TOOL_SECONDS", "0.3")))
    _ledger({"tool": "work", "node": ctx.agent.agent_id, "step": step, "session_id": ctx.agent.session_id,
             "tool_use_id": ctx.tool_use_id, "pid": os.getpid(), "start": started, "end": time.time()})  # fmt: skip
    return f"{step} done"


@tool
def ask_approval(draft: str, ctx: ToolContext) -> str:
    """Ask a human to approve the draft.

    Args:
        draft: What to approve.
    """
    decision = ctx.interrupt("approve_draft", {"draft": draft})
    _ledger({"tool": "ask_approval", "node": ctx.agent.agent_id, "decision": decision,
             "session_id": ctx.agent.session_id, "pid": os.getpid()})  # fmt: skip
    return f"human said {decision}"


def _results(request: ModelRequest) -> list[str]:
    return [
        " ".join(b.get("text", "") for b in r["content"])
        for m in request.messages
        if m["role"] == "user"
        for r in tool_results(m)
    ]


def _call(name: str, tool_name: str, n: int, **inputs: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": f"{name}-{tool_name}-{n}", "name": tool_name, "input": inputs}}
    ]}  # fmt: skip


def worker(name: str, steps: int = 1, answer: str | None = None) -> Turn:
    """`steps` work calls (one per cycle), then an answer naming the node and its results."""

    def turn(request: ModelRequest) -> dict[str, Any] | str:
        done = _results(request)
        if len(done) < steps:
            return _call(name, "work", len(done) + 1, step=f"{name}-{len(done) + 1}")
        return answer or f"[{name}: {'; '.join(done)}]"

    return turn


def editor_turn(request: ModelRequest) -> str:
    prompt = text_of(request.messages[0])
    parts = sorted(p.strip("[]") for p in prompt.split("\n") if p.startswith("[writer"))
    return "EDITED(" + " | ".join(parts) + ")"


def broken_turn(request: ModelRequest) -> str:
    raise RuntimeError("the printer is on fire")


def approver_turn(request: ModelRequest) -> dict[str, Any] | str:
    done = _results(request)
    if not done:
        return _call("approver", "ask_approval", 1, draft="the draft")
    return f"approved: {done[-1]}"


def approver(name: str) -> Turn:
    """Asks a human about its own draft (the interrupt is this node's), then reports the answer."""

    def turn(request: ModelRequest) -> dict[str, Any] | str:
        done = _results(request)
        if not done:
            return _call(name, "ask_approval", 1, draft=f"{name}'s draft")
        return f"[{name}: {done[-1]}]"

    return turn


def handoff_turn(name: str, to: str, work_first: bool = False) -> Turn:
    def turn(request: ModelRequest) -> dict[str, Any] | str:
        done = _results(request)
        if work_first and not done:
            return _call(name, "work", 1, step=f"{name}-1")
        if not any("Handed off" in d or "handed" in d.lower() for d in done):
            return _call(
                name, "handoff_to_agent", len(done) + 1, agent_name=to, message=f"{name} says go"
            )
        return f"{name} handed off"

    return turn


def _agent(config: AgentConfig, name: str, turn: Turn, tools: list[Any] | None = None) -> Agent:
    model = ScriptedModel([turn] * 200, record=False)
    return Agent(
        model=model, tools=tools if tools is not None else [work], config=node_config(config, name)
    )


def _graph(config: AgentConfig, nodes: dict[str, Agent], edges: list[tuple[str, str]]) -> Any:
    builder = GraphBuilder()
    for name, agent in nodes.items():
        builder.add_node(agent, name)
    for a, b in edges:
        builder.add_edge(a, b)
    assert config.session_manager is not None
    return builder.set_session_manager(config.session_manager).build()


def _trace_to_file() -> None:
    """With MA_SPANS: a global tracer provider that appends each ended span to that file."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    path = os.environ.get("MA_SPANS")
    if not path or not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return  # not asked, or set up already in this process

    class FileExporter(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            for s in spans:
                _append(path, {"name": s.name, "trace_id": s.context.trace_id, "span_id": s.context.span_id,
                               "parent_id": s.parent.span_id if s.parent else None, "pid": os.getpid(),
                               "start": s.start_time, "end": s.end_time, "attributes": dict(s.attributes)})  # fmt: skip
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileExporter()))
    trace.set_tracer_provider(provider)


_trace_to_file()  # at import, as an application sets up its tracing


def build_agent(config: AgentConfig) -> Any:
    kind = config.agent_id
    if kind == "graph":
        writer_steps = int(os.environ.get("MA_WRITER_STEPS", "2"))
        nodes = {
            "researcher": _agent(config, "researcher", worker("researcher")),
            "writer_a": _agent(config, "writer_a", worker("writer_a", writer_steps)),
            "writer_b": _agent(config, "writer_b", worker("writer_b", writer_steps)),
            "editor": _agent(config, "editor", editor_turn, tools=[]),
        }
        edges = [
            ("researcher", "writer_a"),
            ("researcher", "writer_b"),
            ("writer_a", "editor"),
            ("writer_b", "editor"),
        ]
        return _graph(config, nodes, edges)
    if kind == "graph-fail":
        nodes = {"researcher": _agent(config, "researcher", worker("researcher")),
                 "broken": _agent(config, "broken", broken_turn)}  # fmt: skip
        return _graph(config, nodes, [("researcher", "broken")])
    if kind == "graph-ask":
        nodes = {"drafter": _agent(config, "drafter", worker("drafter")),
                 "approver": _agent(config, "approver", approver_turn, tools=[ask_approval])}  # fmt: skip
        return _graph(config, nodes, [("drafter", "approver")])
    if kind == "graph-two-asks":
        nodes = {"drafter": _agent(config, "drafter", worker("drafter"))}
        for side in ("a", "b"):
            nodes[f"approver_{side}"] = _agent(
                config, f"approver_{side}", approver(f"approver_{side}"), tools=[ask_approval]
            )
            nodes[f"publish_{side}"] = _agent(config, f"publish_{side}", worker(f"publish_{side}"))
        nodes["summary"] = _agent(config, "summary", worker("summary"))
        edges = [("drafter", "approver_a"), ("drafter", "approver_b"), ("approver_a", "publish_a"),
                 ("approver_b", "publish_b"), ("publish_a", "summary"), ("publish_b", "summary")]  # fmt: skip
        return _graph(config, nodes, edges)
    if kind == "graph-ask-beside-work":
        nodes = {n: _agent(config, n, worker(n)) for n in ("start", "publish_a", "w1", "w2")}
        nodes["approver_a"] = _agent(
            config, "approver_a", approver("approver_a"), tools=[ask_approval]
        )
        edges = [
            ("start", "approver_a"),
            ("approver_a", "publish_a"),
            ("start", "w1"),
            ("w1", "w2"),
        ]
        return _graph(config, nodes, edges)
    if kind == "swarm":
        agents = [
            _agent(config, "triage", handoff_turn("triage", "specialist")),
            _agent(config, "specialist", handoff_turn("specialist", "closer", work_first=True)),
            _agent(config, "closer", worker("closer", 1, answer="closed: all done")),
        ]
        assert config.session_manager is not None
        return Swarm(
            agents,
            session_manager=config.session_manager,
            node_timeout=None,
            execution_timeout=None,
        )
    if kind == "swarm-ask":
        agents = [
            _agent(config, "triage", handoff_turn("triage", "approver")),
            _agent(config, "approver", approver_turn, tools=[ask_approval]),
        ]
        assert config.session_manager is not None
        return Swarm(
            agents,
            session_manager=config.session_manager,
            node_timeout=None,
            execution_timeout=None,
        )
    raise ValueError(f"no multi-agent test job named {kind!r}")
