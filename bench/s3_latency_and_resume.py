"""S3 latency per tool cycle and the whole-history resume curve, elsai vs strands-agents.

    .venv-bench/bin/python -m bench.s3_latency_and_resume   # both parts (a few minutes)
    .venv-bench/bin/python -m bench.s3_latency_and_resume --only latency --repeats 5

latency: a moto server behind `bench.latency_proxy` (a fixed delay per request, the same proxy
for both SDKs). Per tool cycle = the time between two consecutive tool calls in one invocation
(steady state), median over cycles and repeats; optionally the scripted models of both SDKs
wait a fixed time per call, like a (very fast) real model.
curve: whole-history (NullConversationManager) resume of 100 / 1,000 / 10,000-message sessions
on loopback moto: time and S3 requests, both SDKs.

Writes bench/results/s3_latency_and_resume.json and its section of bench/results/README.md
(between the `s3_latency_and_resume` markers; the rest of the file is left alone).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from bench import cycle_trace, elsai_side, s3env, strands_side, workload
from bench.common import RESULTS_DIR, environment, log, write_section
from bench.s3_latency_report import TARGETS, markdown
from bench.s3_sessions import ResumeVariant, build_session, resume_once

BEGIN, END = "<!-- s3_latency_and_resume:begin -->", "<!-- s3_latency_and_resume:end -->"


class LatencyProxy:
    """`python -m bench.latency_proxy` in its own process; stop() ends exactly that process."""

    def __init__(self, upstream: str, delay_ms: float) -> None:
        self.port = s3env._free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "bench.latency_proxy", "--upstream", upstream,
             "--port", str(self.port), "--delay-ms", str(delay_ms)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(self.endpoint + "/moto-api/", timeout=2).read()
                return
            except OSError:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("latency proxy did not start") from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            self._proc.wait(timeout=10)


def _delayed(stream: Callable[..., Any], delay_s: float) -> Callable[..., Any]:
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(delay_s)
        async for event in stream(*args, **kwargs):
            yield event

    return wrapper


# -- 1. per-cycle wall time with a fixed S3 latency --------------------------------------------

#: (label, side, position, overlap): "after_tools" overlaps only that bookmark (the default:
#: no tool starts before its after_model bookmark is durable), True both (opt-in
#: `overlap_after_model`), False none.
LATENCY_VARIANTS: list[tuple[str, str, str | None, bool | str]] = [
    ("strands", "strands", None, True),
    ("elsai / both", "elsai", "both", "after_tools"),
    ("elsai / after_tools", "elsai", "after_tools", "after_tools"),
    ("elsai / both, after_model overlapped (opt-in)", "elsai", "both", True),
    ("elsai / both, no overlap", "elsai", "both", False),
    ("elsai / after_tools, no overlap", "elsai", "after_tools", False),
]
#: Serial requests per cycle on the defaults: both = toolUse message, after_model bookmark,
#: tool result; after_tools = the two messages (its bookmark overlaps the model call).
SERIAL_REQUESTS = {"elsai / both": 3, "elsai / after_tools": 2}
TRACED = {
    "elsai / both": ("both", "after_tools"),
    "elsai / after_tools": ("after_tools", "after_tools"),
    "elsai / both, after_model overlapped (opt-in)": ("both", True),
    "elsai / both, no overlap": ("both", False),
}


def request_cost(bucket: str, samples: int = 30) -> float:
    """Median seconds of one small PutObject through the proxy, with the client elsai uses."""
    client = elsai_side.s3_manager("request-cost", bucket).storage._client
    times = []
    for i in range(samples + 3):
        started = time.perf_counter()
        client.put_object(Bucket=bucket, Key=f"request-cost/{i}.json", Body=b"x" * 300)
        if i >= 3:  # the first ones open the pooled connections
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def floors(model_s: float, put_s: float) -> dict[str, dict[str, float]]:
    """Per default variant: the issue's floor (model call + serial requests + the part of the
    after_tools bookmark the model call cannot hide) and the one with the reply passing it."""
    unhidden = max(0.0, put_s - model_s)
    return {
        label: {
            "issue_floor_ms": (model_s + n * put_s + unhidden) * 1000,
            "floor_ms": (model_s + n * put_s) * 1000,
        }
        for label, n in SERIAL_REQUESTS.items()
    }


def _cycle_times(label: str, bucket: str, cycles: int, model_s: float, run: int) -> list[float]:
    _, side_name, position, overlap = next(v for v in LATENCY_VARIANTS if v[0] == label)
    side = strands_side if side_name == "strands" else elsai_side
    manager = side.s3_manager(
        f"lat-{run}-{label.replace(' ', '').replace('/', '-').replace(',', '')}", bucket
    )
    kwargs: dict[str, Any] = {"session_manager": manager}
    if side_name == "elsai":
        kwargs["position"] = position
        manager.overlap_bookmark = overlap is not False
        manager.overlap_after_model = overlap is True
    agent = side.make_agent(workload.script(cycles), **kwargs)
    if model_s:
        agent.model.stream = _delayed(agent.model.stream, model_s)  # type: ignore[method-assign]
    marks: list[float] = []
    workload.on_tool_call = lambda: marks.append(time.perf_counter())
    try:
        if side.invoke(agent, workload.PROMPT) != "end_turn" or len(marks) != cycles:
            raise RuntimeError(f"{label}: the invocation did not run {cycles} cycles")
    finally:
        workload.on_tool_call = None
    return [b - a for a, b in zip(marks[2:], marks[3:], strict=False)]  # steady state


def bench_latency(
    upstream: str, delay_ms: float, cycles: int, repeats: int, model_ms: list[float]
) -> dict[str, Any]:
    proxy = LatencyProxy(upstream, delay_ms)
    os.environ["AWS_ENDPOINT_URL_S3"] = proxy.endpoint
    elsai_side.forget_shared_clients()
    try:
        s3env.create_bucket(s3env.admin_client(), "latency")
        out = []
        for model_s in (m / 1000 for m in model_ms):
            labels = [v[0] for v in LATENCY_VARIANTS]
            for label in labels:  # warm-up
                _cycle_times(label, "latency", 5, model_s, -1)
            samples: dict[str, list[float]] = {label: [] for label in labels}
            for r in range(repeats):
                for label in labels[r % len(labels) :] + labels[: r % len(labels)]:
                    samples[label].extend(_cycle_times(label, "latency", cycles, model_s, r))
                log(f"  latency (model {model_s * 1000:.0f} ms): repeat {r + 1}/{repeats}")
            medians = {label: statistics.median(v) * 1000 for label, v in samples.items()}
            traces = {
                label: cycle_trace.trace_cycle(
                    "latency", f"trace-{i}-{model_s}", overlap, model_s, position=position
                )
                for i, (label, (position, overlap)) in enumerate(TRACED.items())
            }
            put_s = request_cost("latency")
            out.append(
                {
                    "model_ms": model_s * 1000,
                    "ms_per_cycle": medians,
                    "samples": len(samples["strands"]),
                    "request_ms": put_s * 1000,
                    "floors": floors(model_s, put_s),
                    "traces": traces,
                }
            )
    finally:
        proxy.stop()
        os.environ["AWS_ENDPOINT_URL_S3"] = upstream
        elsai_side.forget_shared_clients()
    return {"delay_ms": delay_ms, "cycles": cycles, "repeats": repeats, "rows": out}


# -- 2. the resume curve ---------------------------------------------------------------------


def bench_curve(
    counter: s3env.RequestCounter, sizes: list[int], scratch: str, strands_max: int
) -> dict[str, Any]:
    rows = []
    admin = s3env.admin_client()
    for size in sizes:
        repeats = 3 if size <= 1000 else 1
        for side_name in ("elsai", "strands") if size <= strands_max else ("elsai",):
            bucket = f"curve-{side_name}-{size}"
            s3env.create_bucket(admin, bucket)
            built = build_session(side_name, True, bucket, size, scratch)
            snapshot = s3env.BucketSnapshot(admin, bucket) if repeats > 1 else None
            variant = ResumeVariant(f"{side_name} / NullConversationManager", side_name, True)
            if snapshot:  # warm-up (client, imports); the big size comes after the small ones
                resume_once(variant, bucket, counter, None)
                snapshot.restore()
            runs = []
            for _ in range(repeats):
                runs.append(resume_once(variant, bucket, counter, None))
                if snapshot:
                    snapshot.restore()
            rows.append(
                {
                    "side": side_name,
                    "messages": size,
                    "repeats": repeats,
                    "median_total_s": statistics.median(r["total_s"] for r in runs),
                    "loaded": runs[0]["loaded"],
                    "requests": runs[0]["requests"],
                    "objects": built["objects"],
                }
            )
            log(
                f"  curve: {side_name} {size}: {rows[-1]['median_total_s'] * 1000:.0f} ms, {rows[-1]['requests']}"
            )
    return {"rows": rows}


# -- report ------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", choices=["latency", "curve"], action="append")
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--model-ms", type=float, action="append", help="model call time (default: 0 and 20)"
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument(
        "--strands-max", type=int, default=1000, help="largest session built for strands"
    )
    parser.add_argument("--out", default=RESULTS_DIR)
    args = parser.parse_args(argv)
    only = set(args.only or ["latency", "curve"])
    started = time.perf_counter()
    results: dict[str, Any] = {"environment": environment(), "arguments": vars(args)}
    server = s3env.MotoServer().start()
    s3env.configure_environment(server.endpoint)
    counter = s3env.RequestCounter()
    counter.install()
    try:
        if "latency" in only:
            log(
                f"latency: {args.delay_ms} ms per S3 request, {args.cycles} cycles x {args.repeats}"
            )
            results["latency"] = bench_latency(
                server.endpoint,
                args.delay_ms,
                args.cycles,
                args.repeats,
                args.model_ms or [0.0, 20.0],
            )
        if "curve" in only:
            log(f"curve: whole-history resume of {args.sizes} messages")
            with tempfile.TemporaryDirectory(
                dir="/dev/shm" if os.path.isdir("/dev/shm") else None
            ) as scratch:
                results["curve"] = bench_curve(counter, args.sizes, scratch, args.strands_max)
    finally:
        counter.uninstall()
        server.stop()
    previous = os.path.join(args.out, "s3_latency_and_resume.json")
    if "curve" not in only and os.path.exists(previous):  # keep the section whole
        with open(previous) as f:
            old = json.load(f)
        if old.get("curve"):
            results["curve"] = {**old["curve"], "from_run": old["environment"]["timestamp"]}
            results["arguments"]["strands_max"] = old["arguments"]["strands_max"]
    results["duration_s"] = time.perf_counter() - started
    results["load_average_at_end"] = os.getloadavg()
    text = markdown(results)
    print(text)
    os.makedirs(args.out, exist_ok=True)
    suffix = "" if "latency" in only and results.get("curve") else "-" + "-".join(sorted(only))
    with open(os.path.join(args.out, f"s3_latency_and_resume{suffix}.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    if not suffix:
        write_section(text, os.path.join(args.out, "README.md"), BEGIN, END)
    return 0 if not missed(results) else 1


def missed(results: dict[str, Any]) -> list[str]:
    """The targets this run missed (the exit status is 1 when there is any)."""
    out = []
    for row in (results.get("latency") or {}).get("rows", []):
        strands = row["ms_per_cycle"]["strands"]
        for label, target in TARGETS.items():
            if row["model_ms"] == 20 and row["ms_per_cycle"][label] / strands > target:
                out.append(f"{label}, model {row['model_ms']:.0f} ms")
    return out


if __name__ == "__main__":
    sys.exit(main())
