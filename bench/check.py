"""Every per-cycle target on the spec-exact defaults, measured in one run; exit 1 on any miss.

    .venv-bench/bin/python -m bench.check            # ~10 minutes
    .venv-bench/bin/python -m bench.check --quick    # smoke test: small N, writes targets-quick.*

One run measures, each against its peer and, where there is one, its floor:

- S3 behind +20 ms per request with a 20 ms model call: per tool cycle, elsai `both` and
  `after_tools` against strands-agents, and against the model call plus the serial requests at
  the per-request cost measured in the same run (bench/s3_latency_and_resume.py);
- power-loss durable local files: elsai `fsync=True` against LangGraph's SqliteSaver with
  `durability="sync"`, its fsync floor, and, without fsync, the time inside each SDK's session
  layer (bench/files_durable.py);
- the agent handler's cold start from the built bundle under Python 3.12
  (bench/cold_start_bench.py, through the dev venv);
- what must not regress: whole-history resume of 1,000 messages, and peak RSS of 5,000 cycles.

Writes bench/results/targets.json and bench/results/targets.md (the figures of this run only).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any

from bench import cold_and_storm, files_durable, s3_latency_report, s3env, session_layer
from bench import s3_latency_and_resume as s3lat
from bench.common import NEAR_FLOOR, RESULTS_DIR, environment, log, scratch, target_met, verdict

COLD_START_TARGET_MS = cold_and_storm.COLD_TARGET_MS
RESUME_TARGET = s3_latency_report.TARGET_RESUME
MODEL_MS = 20.0


def _row(measure: str, elsai: float, peer: float | None, target: str, met: bool,
         floor: float | None = None, unit: str = "ms") -> dict[str, Any]:  # fmt: skip
    ratio = elsai / peer if peer else None
    return {"measure": measure, "elsai": elsai, "peer": peer, "ratio": ratio, "floor": floor,
            "to_floor": elsai / floor if floor else None, "unit": unit, "target": target,
            "met": met}  # fmt: skip


def s3_rows(latency: dict[str, Any], curve: dict[str, Any]) -> list[dict[str, Any]]:
    """The S3 latency targets (ratio and distance to the floor) and the resume guard."""
    row = next(r for r in latency["rows"] if r["model_ms"] == MODEL_MS)
    strands = row["ms_per_cycle"]["strands"]
    out = []
    for label, target in s3_latency_report.TARGETS.items():
        ms, floor = row["ms_per_cycle"][label], row["floors"][label]["issue_floor_ms"]
        out.append(_row(f"S3 +20 ms, model 20 ms, ms / tool cycle, {label} vs strands", ms,
                        strands, f"<= {target} x, or within 10 % of the floor if the floor is "
                        f"above {target} x", target_met(ms, strands, target, floor), floor))  # fmt: skip
        out.append(_row(f"S3 +20 ms, {label} vs its floor (model call + serial requests)",
                        ms, None, f"<= {NEAR_FLOOR} x floor", ms / floor <= NEAR_FLOOR, floor))  # fmt: skip
    sides = {r["side"]: r["median_total_s"] * 1000 for r in curve["rows"] if r["messages"] == 1000}
    out.append(_row("whole-history resume of 1,000 S3 messages, ms", sides["elsai"],
                    sides["strands"], f"<= {RESUME_TARGET} x",
                    sides["elsai"] / sides["strands"] <= RESUME_TARGET))  # fmt: skip
    return out


def file_rows(files: dict[str, Any], layer: dict[str, Any]) -> list[dict[str, Any]]:
    """Durable files against LangGraph and the session layer against strands, each next to
    elsai's floor (the write order's own cost on this disk, bench/write_order.py)."""
    best = files["best_ms_per_cycle"]
    elsai, peer, floor = (
        best["elsai fsync=True"],
        best["langgraph fsync=True"],
        files["floor_ms_per_cycle"],
    )
    target, layer_target = files_durable.TARGET, session_layer.TARGET_LAYER
    return [
        _row("durable files (fsync), ms / tool cycle, elsai vs LangGraph sync", elsai, peer,
             f"<= {target} x, or within 10 % of the floor if the floor is above {target} x",
             files_durable.durable_met(files), floor),
        _row("session layer without fsync, ms / cycle, elsai vs strands", layer["best"]["elsai"],
             layer["best"]["strands"], f"<= {layer_target} x, or within 10 % of the floor if "
             f"the floor is above {layer_target} x", session_layer.layer_met(layer),
             layer.get("floor")),
        _row(f"peak RSS of {files_durable.RSS_CYCLES:,} cycles", files["rss_mb_5000_cycles"], None,
             "< 100 MB", files["rss_mb_5000_cycles"] < 100, unit="MB"),
    ]  # fmt: skip


def cold_rows(cold: dict[str, Any]) -> list[dict[str, Any]]:
    """The cold start of the agent handler, tracing off (a skipped measurement is a miss)."""
    if "rows" not in cold:
        return [_row(f"cold start: {cold.get('skipped', 'not measured')}", float("nan"), None,
                     f"<= {COLD_START_TARGET_MS} ms", False)]  # fmt: skip
    rows = {r["variant"]: r for r in cold["rows"]}
    elsai, strands = rows["elsai, tracing off"], rows["strands, same handler shape"]
    return [_row("cold start of the agent handler, Python 3.12, init ms", elsai["import_ms"],
                 strands["import_ms"], f"<= {COLD_START_TARGET_MS} ms",
                 elsai["import_ms"] <= COLD_START_TARGET_MS)]  # fmt: skip


#: Why a floor, not the ratio, is the bar where the floor itself is above the ratio.
WHY_FLOORS = [
    "",
    "Where a floor is above the target ratio, the target is to come within 10 % of it: going",
    "below needs fewer serial writes per cycle, and each one left is a promise of the defaults.",
    "",
    "- S3, `both`: the toolUse message must be stored before the after_model bookmark names it,",
    "  the bookmark before the tool starts, and the tool result before the next model call:",
    "  three PUTs one after another, plus the model call. The after_tools bookmark already runs",
    "  alongside the model call. Sending the message and its bookmark together would let the",
    "  bookmark land while the message fails, so it would count an unstored message.",
    "- Durable files: four new files per cycle (two messages, two bookmark swaps), each",
    "  fsynced before it is named and its directory after, and no write names one before both",
    "  are durable (the power-loss order); the after_tools bookmark's pair runs alongside the",
    "  next message's, as far as one disk lets two writes overlap. The floor is that write",
    "  order replayed as bare system calls on the same disk in the same run",
    "  (bench/write_order.py), plus elsai's own work measured on tmpfs. Fsyncing the",
    "  bookmark's temp file alongside the message (a group commit) was measured on this disk:",
    "  0.82 against 0.85 ms for the pair, within the noise, so it was not built.",
    "- Session layer without fsync: elsai creates four files per cycle where strands creates",
    "  three; a bookmark swap needs a new file, since a rename is the only atomic replace, and",
    "  rewriting the old file instead would let a reader that had opened it see a torn",
    "  bookmark. A file creation on this disk costs from about 10 us to about 900 us (ext4",
    "  without a journal skips inodes freed in the last 35 s); when it is high, creations are",
    "  most of both layers' time and four against three puts the floor above 0.5 x. The floor",
    "  is elsai's layer on tmpfs with the write order's cost there swapped for its cost on",
    "  this disk. Every repeat of the file runs starts on a settled disk (about 36 s).",
]


def _fmt(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def markdown(results: dict[str, Any]) -> str:
    """The targets table of this run."""
    env = results["environment"]
    lines = [
        "# Issue targets, one run",
        "",
        f"Run {env['timestamp']}, elsai {env['elsai_commit']}, {env['cpus']} CPUs, load average "
        f"(1 min) at start / end {env['load_average_at_start'][0]:.1f} / "
        f"{results['load_average_at_end'][0]:.1f}; `python -m bench.check` "
        f"({results['duration_s']:.0f} s). Peer: strands-agents for S3, resume and the session "
        "layer; LangGraph for durable files. Floors are computed from costs measured in this run.",
        "",
        "| measure | elsai | peer | ratio | floor | elsai / floor | target | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results["targets"]:
        lines.append(
            f"| {r['measure']} | {_fmt(r['elsai'])} | {_fmt(r['peer'])} | {_fmt(r['ratio'])} | "
            f"{_fmt(r['floor'])} | {_fmt(r['to_floor'])} | {r['target']} | "
            f"{verdict(r['met'])} |"
        )
    return "\n".join(lines + WHY_FLOORS) + "\n"


def measure(quick: bool) -> dict[str, Any]:
    """Run every part once, in one process run; the results with their target rows."""
    cycles, repeats = (20, 2) if quick else (100, 5)
    results: dict[str, Any] = {"environment": environment(), "quick": quick}
    log("files: the session layer without fsync (before any fsync traffic), then durable files")
    with scratch("bench-check-") as under:  # every run's files, deleted after the last
        layer = session_layer.layer_times(cycles, repeats, under, settle=not quick)
        files = files_durable.bench(cycles, repeats, 25 if quick else 45, under, not quick)
    server = s3env.MotoServer().start()
    s3env.configure_environment(server.endpoint)
    counter = s3env.RequestCounter()
    counter.install()
    try:
        log("S3: +20 ms per request, model 20 ms; whole-history resume of 1,000 messages")
        latency = s3lat.bench_latency(server.endpoint, 20.0, 8 if quick else 20,
                                      1 if quick else 3, [MODEL_MS])  # fmt: skip
        with tempfile.TemporaryDirectory(
            dir="/dev/shm" if os.path.isdir("/dev/shm") else None
        ) as d:
            curve = s3lat.bench_curve(counter, [1000], d, 1000)
    finally:
        counter.uninstall()
        server.stop()
    strands = results["environment"]["strands_version"]
    cold = cold_and_storm.run_cold_start(3 if quick else 10, strands)
    results.update(files=files, layer=layer, latency=latency, curve=curve, cold_start=cold)
    results["targets"] = s3_rows(latency, curve) + file_rows(files, layer) + cold_rows(cold)
    return results


def main(argv: list[str] | None = None) -> int:
    """Command line: measure, print and write the table; 1 when any target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small N: a smoke test")
    parser.add_argument("--out", default=RESULTS_DIR)
    args = parser.parse_args(argv)
    if not files_durable.LANGGRAPH_PY.exists():
        print(f"{files_durable.LANGGRAPH_PY} is missing: run bench/run.sh once", file=sys.stderr)
        return 2
    started = time.perf_counter()
    results = measure(args.quick)
    results["duration_s"] = time.perf_counter() - started
    results["load_average_at_end"] = os.getloadavg()
    text = markdown(results)
    print(text)
    name = "targets-quick" if args.quick else "targets"
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"{name}.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    with open(os.path.join(args.out, f"{name}.md"), "w") as f:
        f.write(text)
    missed = [r["measure"] for r in results["targets"] if not r["met"]]
    for m in missed:
        print(f"MISSED: {m}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
