"""`elsai local run --example graph`: a multi-agent job on the local runtime, with a crash.

This repository's example factory (`examples/agents/example_graph.py`, bundled by its stack) builds researcher → (writer_a, writer_b) →
editor. Step Functions runs each ready node in its own Lambda slices, the writers in one Map
at the same time; writer_a's Lambda is SIGKILLed inside its tool, Step Functions retries that
branch only, and the node resumes from its own after_model bookmark. The summary says which
nodes ran in which invocation, how the writers overlapped, and, from the tool-run log, that
no node that had completed ran again.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from typing import Any

from elsai.cli.local.answers import exit_code
from elsai.cli.render import Style, job_heading, write
from elsai.serverless.contract.steps import NODE_SLICE

EXAMPLES = {"graph": "example_graph:build_graph"}
KILLED_NODE = "writer_a"


def add_example_option(run: argparse.ArgumentParser) -> None:
    """`--example graph`: run the bundled multi-agent example instead of the order agent."""
    run.add_argument(
        "--example",
        choices=sorted(EXAMPLES),
        help="run a bundled example job: graph = researcher, two writers in parallel, editor "
        f"(the {KILLED_NODE} Lambda is SIGKILLed inside its tool unless --no-kill)",
    )


def run_example(args: argparse.Namespace, prepared: tuple[Any, ...]) -> int:
    """Run the example job end to end and print where each node ran."""
    project, service, pythonpath, _answers, local = prepared
    style = Style.for_stream(sys.stdout, no_color=args.no_color)
    started = time.monotonic()

    def show(event: Any) -> None:
        if not args.json:
            print(
                f"{style.paint(f'{time.monotonic() - started:6.1f}s', 'dim')} {event.line()}",
                flush=True,
            )

    def faults(info: Any) -> Any:
        if args.no_kill or info.action != NODE_SLICE or info.agent_id != KILLED_NODE:
            return None
        return local.Fault(kill_in_tool=1) if info.attempt == 1 else None

    prompt = (
        args.prompt
        if args.prompt != "Process orders 1, 2 and 3"
        else "Write a short piece about otters"
    )
    with local.LocalRuntime(project=project, service=service, agent_factory=EXAMPLES[args.example], pythonpath=pythonpath, fast_retries=True,
                            faults=faults, on_event=show, preloaded=not args.cold_start) as runtime:  # fmt: skip
        job = runtime.jobs.start(prompt, session_id=args.session_id, agent_id="graph").as_dict()
        final = runtime.wait(job["job_id"], timeout=args.timeout).as_dict()
        summary = graph_summary(runtime, job, final)
    if args.json:
        print(json.dumps(summary, indent=2, default=str))
    else:
        print_graph_summary(summary, style)
    return exit_code(summary["status"])


def graph_summary(runtime: Any, job: dict[str, Any], final: dict[str, Any]) -> dict[str, Any]:
    """Per node: its Lambda invocations (slice, attempt, outcome), the writers' overlap, tool runs."""
    mine = [
        r
        for r in runtime.invocations
        if r.info.job_id == job["job_id"] and r.info.action == NODE_SLICE
    ]
    t0 = min((r.started for r in mine), default=0.0)
    invocations = [
        {"node": r.info.agent_id, "slice": r.info.slice, "attempt": r.info.attempt, "request_id": r.request_id[:8],
         "start_s": round(r.started - t0, 2), "end_s": round(r.started + r.duration_s - t0, 2),
         "outcome": "killed" if r.killed else (r.result or {}).get("status", (r.error or {}).get("errorType")),
         "resumed_from": (r.result or {}).get("resume_position") if (r.result or {}).get("resumed_from_checkpoint") else None}
        for r in mine
    ]  # fmt: skip
    spans = {
        n: (min(i["start_s"] for i in invocations if i["node"] == n), max(i["end_s"] for i in invocations if i["node"] == n))
        for n in ("writer_a", "writer_b") if any(i["node"] == n for i in invocations)
    }  # fmt: skip
    overlap = (
        max(0.0, min(spans["writer_a"][1], spans["writer_b"][1]) - max(spans["writer_a"][0], spans["writer_b"][0]))
        if len(spans) == 2 else 0.0
    )  # fmt: skip
    ledger = [e for e in runtime.ledger() if e.get("job_id") == job["job_id"]]
    completed_at: dict[str, float] = {}
    for i in invocations:
        if i["outcome"] == "completed":
            completed_at.setdefault(i["node"], i["end_s"])
    rerun = [
        i["node"]
        for i in invocations
        if i["node"] in completed_at and i["start_s"] > completed_at[i["node"]]
    ]
    return {
        "job_id": job["job_id"], "session_id": job["session_id"], "status": final["status"],
        "text": (final.get("result") or {}).get("text", ""), "error": final.get("error"),
        "nodes": (final.get("multi_agent") or {}).get("nodes", {}), "invocations": invocations,
        "writer_spans": spans, "writer_overlap_s": round(overlap, 2),
        "tool_runs": dict(Counter(f"{e.get('agent_id')}:{e['tool']}" for e in ledger)),
        "completed_nodes_rerun": rerun,
    }  # fmt: skip


def print_graph_summary(s: dict[str, Any], style: Style) -> None:
    """The human-readable form of `graph_summary`."""
    write(job_heading(s["job_id"], s["status"], style))
    if s["text"]:
        print(f"  result: {s['text']}")
    if s["error"]:
        print(style.paint(f"  error: {s['error']}", "red"))
    print("  where each node ran (one line per Lambda invocation):")
    for i in s["invocations"]:
        resumed = f", resumed from {i['resumed_from']}" if i["resumed_from"] else ""
        print(f"    {i['node']:<10} slice {i['slice']} attempt {i['attempt']}  invocation {i['request_id']}  "
              f"{i['start_s']:6.2f}s → {i['end_s']:6.2f}s  {i['outcome']}{resumed}")  # fmt: skip
    if len(s["writer_spans"]) == 2:
        a, b = s["writer_spans"]["writer_a"], s["writer_spans"]["writer_b"]
        print(f"  writers in parallel: writer_a {a[0]:.2f}s→{a[1]:.2f}s, writer_b {b[0]:.2f}s→{b[1]:.2f}s, "
              f"overlap {s['writer_overlap_s']:.2f}s")  # fmt: skip
    print(
        "  tool runs (from the tool-run log): "
        + ", ".join(f"{k}×{v}" for k, v in sorted(s["tool_runs"].items()))
    )
    rerun = s["completed_nodes_rerun"]
    print(
        style.paint("  no completed node ran twice", "green")
        if not rerun
        else style.paint(f"  re-ran after completing: {rerun}", "red")
    )
