"""elsai vs strands-agents: session overhead, S3 requests per cycle, resume time. One run.

    python -m bench.run_all            # full run (what bench/run.sh does)
    python -m bench.run_all --quick    # smaller N and fewer repeats, for a smoke test

Every measurement alternates between the two SDKs inside one process (the order of the
variants rotates on each repeat) and the reported figure is the median of the repeats.
Results: a table on stdout, bench/results/latest.json and bench/results/README.md.
See bench/README.md for what each number means.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from typing import Any

from bench import cold_and_storm, s3env
from bench.common import RESULTS_DIR, environment, log, write_section
from bench.file_overhead import bench_overhead
from bench.run_all_report import markdown, verdicts
from bench.s3_sessions import bench_resume, bench_s3_requests

BEGIN, END = "<!-- run_all:begin -->", "<!-- run_all:end -->"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="small N, 2 repeats: a smoke test, not a measurement"
    )
    parser.add_argument(
        "--cycles", type=int, default=100, help="tool cycles in the file-overhead benchmark"
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--s3-cycles", type=int, default=60)
    parser.add_argument("--resume-messages", type=int, default=1000)
    parser.add_argument(
        "--only", choices=["overhead", "s3", "resume", "cold_start", "storm"], action="append"
    )
    parser.add_argument("--cold-runs", type=int, default=10, help="cold-start rounds")
    parser.add_argument("--storm-jobs", type=int, default=20, help="fault-storm jobs")
    parser.add_argument(
        "--disk-dir", default=None, help="directory on a real disk (default: system temp dir)"
    )
    parser.add_argument(
        "--tmpfs-dir", default="/dev/shm", help="directory on tmpfs; skipped if missing"
    )
    parser.add_argument("--out", default=RESULTS_DIR)
    args = parser.parse_args(argv)
    if args.quick:
        args.cycles, args.repeats, args.s3_cycles, args.resume_messages = 30, 2, 30, 200
        args.cold_runs, args.storm_jobs = 3, 3
    only = set(args.only or ["overhead", "s3", "resume", "cold_start", "storm"])

    started = time.perf_counter()
    results: dict[str, Any] = {"environment": environment(), "arguments": vars(args)}
    disk = args.disk_dir or tempfile.gettempdir()
    locations = {"disk": disk}
    if args.tmpfs_dir and os.path.isdir(args.tmpfs_dir):
        locations["tmpfs"] = args.tmpfs_dir

    if "overhead" in only:
        log(
            f"1/3 per-cycle overhead on files: {args.cycles} cycles x {args.repeats} repeats, {list(locations)}"
        )
        results["overhead"] = bench_overhead(args.cycles, args.repeats, locations)

    if only & {"s3", "resume"}:
        server = s3env.MotoServer().start()
        s3env.configure_environment(server.endpoint)
        counter = s3env.RequestCounter()
        counter.install()
        try:
            if "s3" in only:
                log(
                    f"2/3 S3 requests per tool cycle: {args.s3_cycles} cycles, moto at {server.endpoint}"
                )
                s3env.create_bucket(s3env.admin_client(), "requests")
                results["s3_requests"] = bench_s3_requests(counter, "requests", args.s3_cycles)
            if "resume" in only:
                log(
                    f"3/3 resume of a {args.resume_messages}-message S3 session x {args.repeats} repeats"
                )
                scratch = locations.get("tmpfs", disk)
                results["resume"] = bench_resume(
                    counter, args.resume_messages, args.repeats, scratch
                )
        finally:
            counter.uninstall()
            server.stop()

    if "cold_start" in only:
        log(f"cold start of both handlers from their 3.12 bundles: {args.cold_runs} rounds")
        strands = results["environment"]["strands_version"]
        results["cold_start"] = cold_and_storm.run_cold_start(args.cold_runs, strands)
    if "storm" in only:
        log(f"fault storm on the local runtime: {args.storm_jobs} jobs")
        results["storm"] = cold_and_storm.run_storm(args.storm_jobs)

    results["duration_s"] = time.perf_counter() - started
    results["environment"]["load_average_at_end"] = os.getloadavg()
    results["verdicts"] = verdicts(results)
    text = markdown(results)
    print(text)
    os.makedirs(args.out, exist_ok=True)
    suffix = "-quick" if args.quick else ""
    with open(os.path.join(args.out, f"latest{suffix}.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    if suffix:
        with open(os.path.join(args.out, "latest-quick.md"), "w") as f:
            f.write(text)
    else:  # the other benchmarks' sections of the README stay as they are
        write_section(text, os.path.join(args.out, "README.md"), BEGIN, END)
    log(
        f"wrote {args.out}/latest{suffix}.json and the markdown summary ({results['duration_s']:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
