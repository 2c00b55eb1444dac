"""S3 requests and time per Plan, node slice and Fold of a multi-agent job, by graph size.

Each step runs exactly as the Lambda handler runs it (`elsai.serverless.orchestration`: the
factory rebuilds the whole Graph, `build_steps`, then plan / run_node_slice / fold) against
S3 (a moto server in its own process, bench/s3env.py), and every S3 request made inside a
step is counted by operation. The graphs are `bench/fanout_graph.py`: planner -> n-2
parallel writers -> editor, every node one tool call then an answer. A node slice's
figures must not grow with n; Plan's and Fold's grow only with the batch they fold. A first
job of the smallest size warms up imports and connections and is not reported.

    .venv/bin/python -m bench.multiagent_scale            # 5, 20, 50 nodes
    .venv/bin/python -m bench.multiagent_scale --sizes 5 20 --out /tmp/x.json

Writes bench/results/multiagent_scale.json and prints a markdown table.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

from bench import fanout_graph
from bench.s3env import RequestCounter

RESULTS = Path(__file__).parent / "results" / "multiagent_scale.json"


def _manager(bucket: str, job_id: str) -> Any:
    from elsai.session import S3SessionManager

    return S3SessionManager(session_id=job_id, bucket=bucket)


def _step(
    counter: RequestCounter, bucket: str, kind: str, request: Any
) -> tuple[Any, dict[str, Any]]:
    """One handler step of the job, its S3 requests by operation and its wall time."""
    from elsai.serverless import orchestration

    with counter.counting() as counts:
        started = time.perf_counter()
        steps = orchestration.build_steps(
            request,
            session_manager=_manager(bucket, request.job_id),
            factory=fanout_graph.build_agent,
        )
        if kind == "plan":
            result: Any = orchestration.plan(request, steps)
        elif kind == "fold":
            result = orchestration.fold(request, steps)
        else:
            result = orchestration.run_node_slice(request, steps, remaining_ms=lambda: 10**9)
        seconds = time.perf_counter() - started
    return result, {
        "kind": kind,
        "node": getattr(request, "node", None),
        "requests": dict(counts),
        "total": sum(counts.values()),
        "seconds": round(seconds, 4),
    }


def run_job(counter: RequestCounter, bucket: str, size: int) -> list[dict[str, Any]]:
    """Run one `size`-node fan-out job step by step; every step's measurement, in order."""
    from elsai.serverless.contract import JobStepRequest
    from elsai.serverless.contract.node_steps import FoldRequest, NodeSliceRequest

    job_id = f"scale-{size}-{uuid.uuid4().hex[:8]}"
    ids = {"job_id": job_id, "execution_id": f"arn:exec:{job_id}", "session_id": job_id,
           "agent_id": f"fanout-{size}"}  # fmt: skip
    measured: list[dict[str, Any]] = []
    planned, m = _step(counter, bucket, "plan", JobStepRequest(**ids, prompt="write the report"))
    measured.append(m)
    while planned.status == "run":
        reports = []
        for item in planned.nodes:
            request = NodeSliceRequest(**ids, node=item["node"], started_at=item["started_at"])
            result, m = _step(counter, bucket, "node_slice", request)
            if result.status != "completed":
                raise RuntimeError(f"node {item['node']} ended its slice {result.status}")
            measured.append(m)
            reports.append(result.model_dump())
        fold_request = FoldRequest(**ids, batch=planned.batch, results=reports)
        planned, m = _step(counter, bucket, "fold", fold_request)
        m["batch_size"] = len(reports)
        measured.append(m)
    if planned.status != "completed":
        raise RuntimeError(f"the {size}-node job ended {planned.status}: {planned.error}")
    return measured


def summarize(size: int, steps: list[dict[str, Any]]) -> dict[str, Any]:
    """Per kind of step: request counts (min/max/by operation) and median time."""
    out: dict[str, Any] = {"nodes": size}
    for kind in ("plan", "node_slice", "fold"):
        mine = [s for s in steps if s["kind"] == kind]
        ops: collections.Counter[str] = collections.Counter()
        for s in mine:
            ops.update(s["requests"])
        out[kind] = {
            "steps": len(mine),
            "requests_min": min(s["total"] for s in mine),
            "requests_max": max(s["total"] for s in mine),
            "requests_by_operation_mean": {k: round(v / len(mine), 2) for k, v in ops.items()},
            "seconds_median": round(statistics.median(s["seconds"] for s in mine), 4),
        }
    return out


def _table(summaries: list[dict[str, Any]]) -> str:
    rows = ["| nodes | step | steps | S3 requests (min–max) | by operation (mean) | time (median) |",
            "|---:|---|---:|---|---|---:|"]  # fmt: skip
    for s in summaries:
        for kind in ("plan", "node_slice", "fold"):
            k = s[kind]
            ops = ", ".join(
                f"{op} {n}" for op, n in sorted(k["requests_by_operation_mean"].items())
            )
            rows.append(
                f"| {s['nodes']} | {kind} | {k['steps']} | {k['requests_min']}–{k['requests_max']} "
                f"| {ops} | {k['seconds_median'] * 1000:.1f} ms |"
            )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 20, 50])
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()

    from bench.s3env import MotoServer, admin_client, configure_environment

    server = MotoServer().start()
    counter = RequestCounter()
    try:
        configure_environment(server.endpoint)
        bucket = "elsai-scale-bench"
        admin_client().create_bucket(Bucket=bucket)
        counter.install()
        run_job(counter, bucket, min(args.sizes))  # warm-up (imports, connections): not kept
        summaries = [summarize(n, run_job(counter, bucket, n)) for n in args.sizes]
    finally:
        counter.uninstall()
        server.stop()
    table = _table(summaries)
    print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    load = [round(x, 2) for x in os.getloadavg()]  # a loaded machine makes every step slower
    record = {"summaries": summaries, "table": table, "load_average_1_5_15": load}
    args.out.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
