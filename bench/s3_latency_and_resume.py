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
from pathlib import Path
from typing import Any

from bench import cycle_trace, elsai_side, s3env, strands_side, workload
from bench.run_all import RESULTS_DIR, ResumeVariant, _build_session, _resume_once, environment

TARGET_BOTH, TARGET_AFTER_TOOLS, TARGET_RESUME = 0.6, 0.5, 0.15
TARGETS = {"elsai / both": TARGET_BOTH, "elsai / after_tools": TARGET_AFTER_TOOLS}
BEGIN, END = "<!-- s3_latency_and_resume:begin -->", "<!-- s3_latency_and_resume:end -->"


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


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
            built = _build_session(side_name, True, bucket, size, scratch)
            snapshot = s3env.BucketSnapshot(admin, bucket) if repeats > 1 else None
            variant = ResumeVariant(f"{side_name} / NullConversationManager", side_name, True)
            if snapshot:  # warm-up (client, imports); the big size comes after the small ones
                _resume_once(variant, bucket, counter, None)
                snapshot.restore()
            runs = []
            for _ in range(repeats):
                runs.append(_resume_once(variant, bucket, counter, None))
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


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def markdown(results: dict[str, Any]) -> str:
    env = results["environment"]
    lines = [
        BEGIN,
        "## S3 latency off the critical path, resume cost independent of history",
        "",
        f"Run {env['timestamp']}, elsai {env['elsai_commit']}, strands-agents {env['strands_version']}, "
        f"moto {env['moto_version']}; `python -m bench.s3_latency_and_resume` ({results['duration_s']:.0f} s). "
        f"Load average (1 min) at start / end: {env['load_average_at_start'][0]:.1f} / "
        f"{results['load_average_at_end'][0]:.1f} on this 2-core machine, shared with other "
        "engineers' test runs, so absolute times are noisy; both SDKs ran "
        "interleaved in the same process, so the ratios are the figures to read.",
        "",
    ]
    lat = results.get("latency")
    if lat:
        lines += [
            f"### Per tool cycle with {lat['delay_ms']:.0f} ms added to every S3 request "
            f"(one proxy for both SDKs; {lat['cycles']}-cycle invocations x {lat['repeats']}, "
            "median of the steady-state cycles)",
            "",
            "Rows `elsai / both` and `elsai / after_tools` are the defaults (the after_model "
            "bookmark in line: no tool starts before it is durable; the after_tools bookmark "
            "overlaps the model call and the write of its reply). Floor (issue) = model call + "
            "the serial requests (both: toolUse message, after_model bookmark, tool result; "
            "after_tools: the two messages) + the part of the after_tools bookmark the model call "
            "cannot hide, each request at the cost of one small PutObject measured through the "
            "same proxy in the same run; floor (reply passes) = the same without that last part, "
            "which the reply's write now overlaps.",
            "",
            "| model call | variant | ms / cycle | ratio to strands | target | verdict | "
            "floor (issue) ms | floor (reply passes) ms | ms / cycle over floor (issue) |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for row in lat["rows"]:
            strands = row["ms_per_cycle"]["strands"]
            for label, value in row["ms_per_cycle"].items():
                ratio = value / strands
                target = TARGETS.get(label)
                verdict = "" if target is None else _verdict(ratio <= target)
                floor = row.get("floors", {}).get(label)
                extra = (
                    f"{floor['issue_floor_ms']:.1f} | {floor['floor_ms']:.1f} | "
                    f"{value / floor['issue_floor_ms']:.2f}"
                    if floor
                    else " | | "
                )
                lines.append(
                    f"| {row['model_ms']:.0f} ms | {label} | {value:.1f} | {ratio:.2f} | "
                    f"{'' if target is None else f'<= {target}'} | {verdict} | {extra} |"
                )
        lines.append("")
        lines += [
            "One small PutObject through the proxy (median of 30, same run): "
            + ", ".join(
                f"{r['request_ms']:.1f} ms (model {r['model_ms']:.0f} ms rows)"
                for r in lat["rows"]
                if "request_ms" in r
            )
            + ".",
            "",
        ]
        for row in lat["rows"]:
            if row.get("traces"):
                lines += [
                    f"#### S3 requests of one cycle per variant, model call {row['model_ms']:.0f} ms",
                    "",
                ]
                lines += cycle_trace.markdown(row["traces"])
    curve = results.get("curve")
    if curve:
        lines += [
            "### Whole-history resume (NullConversationManager) on loopback moto: the curve",
            "",
            *(
                [f"(Not re-run: the rows of the run of {curve['from_run']}.)", ""]
                if curve.get("from_run")
                else []
            ),
            "Timed: build the session manager and the agent (loads the history) + one invocation "
            "that ends the turn. Requests: every S3 call of that, by operation.",
            "",
            "| messages | elsai (ms) | strands (ms) | ratio | elsai requests | strands requests |",
            "|---|---|---|---|---|---|",
        ]
        by = {(r["side"], r["messages"]): r for r in curve["rows"]}
        for size in sorted({r["messages"] for r in curve["rows"]}):
            e, st = by[("elsai", size)], by.get(("strands", size))
            fmt = lambda req: ", ".join(f"{k} {v}" for k, v in sorted(req.items()))  # noqa: E731
            if st is None:
                lines.append(
                    f"| {size:,} | {e['median_total_s'] * 1000:.0f} | not run (see below) | — | "
                    f"{fmt(e['requests'])} | — |"
                )
                continue
            ratio = e["median_total_s"] / st["median_total_s"]
            lines.append(
                f"| {size:,} | {e['median_total_s'] * 1000:.0f} | {st['median_total_s'] * 1000:.0f} | "
                f"{ratio:.2f} | {fmt(e['requests'])} | {fmt(st['requests'])} |"
            )
        if any(("strands", size) not in by for size in {r["messages"] for r in curve["rows"]}):
            lines += [
                "",
                f"strands rows stop at {results['arguments']['strands_max']:,} messages: building a "
                "10,000-message strands session with its own agent loop (the way every session "
                "here is built) had reached 5,000 messages after about 11 minutes, at about 3 messages "
                "a second and slowing, so it was stopped. strands reads one GET per message on "
                "resume (1,003 requests at 1,000 messages above).",
            ]
        if ("elsai", 1000) in by:
            r = by[("elsai", 1000)]["median_total_s"] / by[("strands", 1000)]["median_total_s"]
            lines += [
                "",
                f"Target: 1,000 messages <= {TARGET_RESUME}x strands: {r:.2f} ({_verdict(r <= TARGET_RESUME)}).",
            ]
        lines.append("")
    lines.append(END)
    return "\n".join(lines) + "\n"


def write_section(text: str, path: str, begin: str = BEGIN, end: str = END) -> None:
    """Replace a benchmark's section of the README (or append it), leaving the rest alone."""
    old = Path(path).read_text() if os.path.exists(path) else ""
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        new = head + text.rstrip("\n") + rest.split(end, 1)[1]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    with open(path, "w") as f:
        f.write(new)


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
        write_section(text, os.path.join(args.out, "README.md"))
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
