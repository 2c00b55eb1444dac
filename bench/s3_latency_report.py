"""The results section of `python -m bench.s3_latency_and_resume` (markdown)."""

from __future__ import annotations

from typing import Any

from bench import cycle_trace
from bench.common import verdict as _verdict

TARGET_BOTH, TARGET_AFTER_TOOLS, TARGET_RESUME = 0.6, 0.5, 0.15
TARGETS = {"elsai / both": TARGET_BOTH, "elsai / after_tools": TARGET_AFTER_TOOLS}


def markdown(results: dict[str, Any]) -> str:
    env = results["environment"]
    lines = [
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
    return "\n".join(lines) + "\n"
