"""A fan-out Graph job on the local runtime, with writers SIGKILLed mid-tool: time and requests.

The local runtime runs the synthesized state machine on moto with the handlers as real child
processes (elsai.local). The job is bench/fanout_graph.py's planner -> n-2 writers -> editor;
the first attempt of each writer named in --kill is SIGKILLed inside its tool call, after the
tool ran. Reported: the job's status and wall time, node slices per node (only the killed
writers may have two), which retried slices resumed from their node's checkpoint, how many
node slices ran at once at most (<= maxParallelNodes) and how many of each step ran. S3
requests per step are bench/multiagent_scale.py's measurement.

    .venv/bin/python -m bench.multiagent_fanout_local                # 50 nodes, 8 at once
    .venv/bin/python -m bench.multiagent_fanout_local --nodes 10 --parallel 4

Writes bench/results/multiagent_fanout_local.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "multiagent_fanout_local.json"


def fanout_runtime(parallel: int) -> Any:
    """A LocalRuntime whose state machine runs at most `parallel` nodes at once."""
    from elsai.local import LocalRuntime
    from elsai.local.services import services_in_template
    from elsai.local.template import load_service
    from infra.synth import synth_template

    base = load_service(ROOT)
    template = synth_template({"maxParallelNodes": parallel})
    (service,) = [
        s for s in services_in_template(template, base.stack_name)
        if s.service_id == base.service_id
    ]  # fmt: skip
    return LocalRuntime(project=ROOT, service=dataclasses.replace(base, template=service.template),
                        agent_factory="fanout_graph:build_agent", fast_retries=True,
                        pythonpath=(str(ROOT / "bench"),))  # fmt: skip


def most_at_once(records: list[Any]) -> int:
    """The most node slices that were running at the same moment (from start/end stamps)."""
    edges = sorted(
        [(r.started, 1) for r in records] + [(r.started + r.duration_s, -1) for r in records]
    )
    running = peak = 0
    for _, step in edges:
        running += step
        peak = max(peak, running)
    return peak


def run_fanout(rt: Any, size: int, killed: set[str]) -> dict[str, Any]:
    """Run one `size`-node job, killing the first attempt of each writer in `killed` mid-tool."""
    from elsai.local import Fault, InvocationInfo

    def plan(info: InvocationInfo) -> Fault | None:
        if info.action == "node_slice" and info.agent_id in killed and info.attempt == 1:
            return Fault(kill_in_tool=1)
        return None

    rt.faults = plan
    started = time.perf_counter()
    job = rt.jobs.start("write the report", agent_id=f"fanout-{size}")
    final = rt.wait(job.job_id, timeout=1800)
    seconds = time.perf_counter() - started
    rt.faults = None
    mine = [r for r in rt.invocations if r.info.job_id == job.job_id]
    slices = [r for r in mine if r.info.action == "node_slice"]
    return {
        "job": final.as_dict(),
        "seconds": round(seconds, 2),
        "node_slices": dict(Counter(r.info.agent_id for r in slices)),
        "killed": sorted({r.info.agent_id for r in slices if r.killed}),
        "resumed": sorted(
            {
                r.info.agent_id
                for r in slices
                if r.result and r.result.get("resumed_from_checkpoint")
            }
        ),  # fmt: skip
        "most_at_once": most_at_once(slices),
        "steps": dict(Counter(r.info.action for r in mine)),
        "records": slices,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--kill", nargs="*", default=["writer_07", "writer_31"])
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    with fanout_runtime(args.parallel) as rt:
        report = run_fanout(rt, args.nodes, set(args.kill))
    report.pop("records")
    report["job"] = {k: report["job"].get(k) for k in ("status", "executions", "error")}
    report.update(nodes=args.nodes, parallel=args.parallel)
    print(json.dumps(report, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
