"""A Graph job on the local runtime is one trace: its run span above every step, from every Lambda.

The children trace with ELSAI_TRACING=otel and write their ended spans to a file (ma_agents).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from elsai.serverless.contract.jobs_api import StartedJob
from elsai.telemetry.job_spans import job_span_ids
from tests.system.local_stack import LocalStack


def _traced_job(stack: LocalStack, agent_id: str) -> tuple[StartedJob, list[dict[str, Any]]]:
    rt = stack.rt
    spans_file = stack.ledger_path.parent / f"spans-{agent_id}.jsonl"
    rt.child_env.update({"ELSAI_TRACING": "otel", "MA_SPANS": str(spans_file)})
    try:
        job = rt.jobs.start("Write about otters", agent_id=agent_id)
        final = rt.wait(job.job_id, timeout=120)
    finally:
        for name in ("ELSAI_TRACING", "MA_SPANS"):
            rt.child_env.pop(name, None)
    assert final.status == "SUCCEEDED", final
    return job, [json.loads(line) for line in spans_file.read_text().splitlines()]


def _run_span(
    job: StartedJob, spans: list[dict[str, Any]], kind: str
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The job's trace and its one run span, a root under the ids derived from the job id."""
    trace_id, run_span_id = job_span_ids(job.job_id)
    mine = [s for s in spans if s["trace_id"] == trace_id]
    [run] = [s for s in mine if s["name"].startswith(f"invoke_{kind} ")]
    assert run["span_id"] == run_span_id and run["parent_id"] is None
    return mine, run


def test_a_graph_job_is_one_trace_with_its_run_span_above_every_step(stack: LocalStack) -> None:
    job, spans = _traced_job(stack, "graph")
    mine, run = _run_span(job, spans, "graph")
    trace_id, run_span_id = job_span_ids(job.job_id)
    assert run["attributes"]["elsai.node.status"] == "completed"
    assert run["attributes"]["elsai.job_id"] == job.job_id

    steps = [s for s in mine if s["parent_id"] == run_span_id]
    kinds = Counter(s["attributes"]["elsai.step"] for s in steps)
    assert kinds["plan"] >= 1 and kinds["fold"] == 3, kinds  # researcher, writers, editor
    nodes = {s["span_id"]: s for s in steps if s["attributes"]["elsai.step"] == "node_slice"}
    assert {s["attributes"]["elsai.node.name"] for s in nodes.values()} == {
        "researcher",
        "writer_a",
        "writer_b",
        "editor",
    }
    assert len({s["pid"] for s in steps}) > 1, "the steps ran in separate Lambda processes"
    # every node's agent span nests under a node span of that node
    agents = [s for s in mine if s["name"].startswith("invoke_agent ")]
    assert {a["name"] for a in agents} == {f"invoke_agent {n}" for n in
                                           ("researcher", "writer_a", "writer_b", "editor")}  # fmt: skip
    for agent in agents:
        node = nodes[agent["parent_id"]]
        assert agent["name"] == f"invoke_agent {node['attributes']['elsai.node.name']}"
    # the run span covers every node's slices (it starts when the run's cursor was created)
    assert all(run["start"] <= s["start"] and s["end"] <= run["end"] for s in nodes.values())
    # nothing of this job landed in another trace except the first slice that found the graph
    stray = [s for s in spans if s["trace_id"] != trace_id]
    assert {s["name"] for s in stray} <= {f"run_slice {job.job_id}", "invoke_agent graph"}, stray


def test_a_swarm_job_is_one_trace_with_its_handoffs_under_the_run_span(stack: LocalStack) -> None:
    job, spans = _traced_job(stack, "swarm")
    mine, run = _run_span(job, spans, "swarm")
    run_span_id = run["span_id"]
    nodes = [
        s for s in mine if s["parent_id"] == run_span_id and s["name"].startswith("invoke_node ")
    ]
    order = [s["attributes"]["elsai.node.name"] for s in sorted(nodes, key=lambda s: s["start"])]
    assert order == ["triage", "specialist", "closer"]  # each handoff in a slice of its own
    assert all(s["attributes"]["elsai.node.status"] == "completed" for s in nodes)
