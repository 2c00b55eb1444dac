"""The markdown of `python -m bench.run_all`: its checks, then one section per benchmark."""

from __future__ import annotations

from typing import Any

from bench import cold_and_storm
from bench.common import verdict as _verdict
from bench.file_overhead import elsai_file_label, ratio_key
from bench.s3_sessions import RESUME_RATIOS, RESUME_ROWS

TARGET_OVERHEAD_RATIO = 0.5
TARGET_PUT_PER_CYCLE = 4
TARGET_GET_PER_CYCLE = 0
TARGET_RESUME_RATIO = 0.25


def _fmt_ops(ops: dict[str, float]) -> str:
    short = {
        "PutObject": "PUT",
        "GetObject": "GET",
        "ListObjectsV2": "LIST",
        "HeadObject": "HEAD",
        "DeleteObject": "DEL",
    }
    parts = [f"{v:g} {short.get(k, k)}" for k, v in sorted(ops.items()) if round(v, 3) != 0]
    return ", ".join(parts) if parts else "0"


def _check(
    target: str,
    elsai: float | None,
    strands: float | None,
    unit: str,
    limit: str,
    met: bool,
    *,
    ratio: float | None = None,
    headline: bool = True,
    note: str | None = None,
) -> dict[str, Any]:
    return {
        "target": target,
        "elsai": elsai,
        "strands": strands,
        "unit": unit,
        "value": ratio,
        "limit": limit,
        "met": met,
        "headline": headline,
        "note": note,
    }


def verdicts(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The benchmark targets. `headline` False = reported for information, not the target's test."""
    out = []
    ov = results.get("overhead")
    if ov:
        by = {row["variant"]: row for row in ov["rows"]}
        # Headline: fsync=False, the same durability class as strands (neither fsyncs). Then
        # the default fsync=True, which also survives power loss: informational.
        for fsync in (False, True):
            for loc in ov["locations"]:
                elsai = by[elsai_file_label(loc, "both", fsync)]
                strands = by[f"strands / {loc}"]
                ratios = ov["ratios"][ratio_key(loc, "both", fsync)]
                for field, rkey, what in (
                    ("in_layer_ms_per_cycle", "in_layer_ratio", "time in the session layer"),
                    ("overhead_ms_per_cycle", "overhead_ratio", "end-to-end difference"),
                ):
                    r = ratios[rkey]
                    out.append(
                        _check(
                            f"file overhead per cycle, {what}, {loc}: elsai both fsync={fsync} / strands",
                            elsai[field],
                            strands[field],
                            "ms/cycle",
                            f"<= {TARGET_OVERHEAD_RATIO}",
                            r is not None and r <= TARGET_OVERHEAD_RATIO,
                            ratio=r,
                            headline=not fsync,
                            note=None
                            if r is not None
                            else "strands' with-session median was not above its no-session median (noise)",
                        )
                    )
    rq = results.get("s3_requests")
    if rq:
        both = next(r for r in rq["rows"] if r["variant"] == "elsai / both")
        strands = next(r for r in rq["rows"] if r["side"] == "strands")
        for op, short, limit, ok in (
            ("PutObject", "PUT", f"<= {TARGET_PUT_PER_CYCLE}", lambda v: v <= TARGET_PUT_PER_CYCLE),
            ("GetObject", "GET", f"== {TARGET_GET_PER_CYCLE}", lambda v: v == TARGET_GET_PER_CYCLE),
        ):
            value = both["per_cycle"].get(op, 0)
            out.append(
                _check(
                    f"S3 {short} per tool cycle, elsai both (strands: no bookmark at all)",
                    value,
                    strands["per_cycle"].get(op, 0),
                    "requests",
                    limit,
                    ok(value),
                )
            )
    rs = results.get("resume")
    if rs:
        by = {row["variant"]: row for row in rs["rows"]}
        elsai = by[RESUME_ROWS["elsai_window"]]
        strands = by[RESUME_ROWS["strands_window"]]
        lists = elsai["requests"].get("ListObjectsV2", 0)
        out.append(
            _check(
                "S3 LIST per resume, elsai default (design expectation, not an issue target)",
                lists,
                strands["requests"].get("ListObjectsV2", 0),
                "requests",
                "== 0",
                lists == 0,
            )
        )
        for key, (a, b, what) in RESUME_RATIOS.items():
            if key.startswith("null"):
                continue
            r = rs["ratios"][key]
            out.append(
                _check(
                    f"resume of a {rs['messages']:,}-message S3 session, {what}",
                    by[RESUME_ROWS[a]]["median_total_s"] * 1000,
                    by[RESUME_ROWS[b]]["median_total_s"] * 1000,
                    "ms",
                    f"<= {TARGET_RESUME_RATIO}",
                    r <= TARGET_RESUME_RATIO,
                    ratio=r,
                )
            )
    return out


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}g}"


def _check_rows(checks: list[dict[str, Any]]) -> list[str]:
    lines = [
        "| measure | elsai | strands | unit | ratio elsai/strands | target | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in checks:
        note = f" ({c['note']})" if c.get("note") else ""
        lines.append(
            f"| {c['target']} | {_num(c['elsai'])} | {_num(c['strands'])} | {c['unit']} | "
            f"{_num(c['value'])} | {c['limit']} | {_verdict(c['met'])}{note} |"
        )
    return lines


def markdown(results: dict[str, Any]) -> str:
    env = results["environment"]
    lines = [
        "# Benchmark results: elsai vs strands-agents",
        "",
        f"Run {env['timestamp']} on {env['platform']}, Python {env['python']}, {env['cpus']} CPUs; "
        f"elsai {env['elsai_commit']}, strands-agents {env['strands_version']}, moto {env['moto_version']}. "
        f"Whole run: {results['duration_s']:.0f} s. Load average (1 min) at start / end: "
        f"{env['load_average_at_start'][0]:.1f} / {env['load_average_at_end'][0]:.1f}. "
        "Generated by `bench/run.sh`; see `bench/README.md` for what each number means and how "
        "to read it.",
        "",
        "The targets of the current performance work (S3 latency, durable files against "
        "LangGraph, cold start, each next to its floor) are measured together in one run by "
        "`bench/run.sh --check`: see [targets.md](targets.md). The checks below are the "
        "earlier rounds' targets, kept so a regression shows.",
        "",
        "## Checks of this run (earlier targets)",
        "",
        "File rows compare like with like: elsai `FileSessionManager(fsync=False)` and strands' "
        "`FileSessionManager` both survive a killed process (atomic rename) and neither survives "
        "power loss. elsai's default, `fsync=True`, also survives power loss; its cost is "
        "reported below the targets as the price of that durability, not as the target's test. "
        'Resume rows: see section 3 for what "client" means.',
        "",
    ]
    checks = results["verdicts"]
    lines += _check_rows([c for c in checks if c["headline"]])
    informational = [c for c in checks if not c["headline"]]
    if informational:
        lines += [
            "",
            "Informational — elsai's default `fsync=True` (power-loss durable; strands has no such "
            "mode), against the same strands figures:",
            "",
        ]
        lines += _check_rows(informational)
    ov = results.get("overhead")
    if ov:
        lines += [
            "",
            f"## 1. Per-cycle session overhead on local files ({ov['cycles']} tool cycles, median of {ov['repeats']})",
            "",
            "In the session layer = wall time spent inside the session manager's calls, per cycle (direct). "
            "End-to-end difference = median over repeats of (time with the session manager − time of the same SDK "
            "without one, run just before) / cycles. strands never fsyncs.",
            "",
            "| variant | median total (s) | ms / cycle | in the session layer, ms / cycle | end-to-end difference, ms / cycle |",
            "|---|---|---|---|---|",
        ]
        for row in ov["rows"]:
            o = row["overhead_ms_per_cycle"]
            i = row["in_layer_ms_per_cycle"]
            lines.append(
                f"| {row['variant']} | {row['median_s']:.3f} | {row['ms_per_cycle']:.3f} | "
                f"{'—' if i is None else f'{i:.3f}'} | {'—' if o is None else f'{o:.3f}'} |"
            )
        lines += [
            "",
            "| location / elsai config | ratio elsai/strands: in the session layer | end-to-end difference | total time |",
            "|---|---|---|---|",
        ]
        for key, r in ov["ratios"].items():
            orat = "n/a" if r["overhead_ratio"] is None else f"{r['overhead_ratio']:.2f}"
            lines.append(f"| {key} | {r['in_layer_ratio']:.2f} | {orat} | {r['total_ratio']:.2f} |")
        lines += [
            "",
            "Where the time in the session layer goes (ms / cycle, median over repeats; elsai: "
            "`message_appended` = message files, `boundary` = checkpoint.json at after_tools / "
            "after_model; strands: `append_message` = message files, `sync_agent` = agent.json):",
            "",
            "| variant | by method |",
            "|---|---|",
        ]
        for row in ov["rows"]:
            methods = row.get("in_layer_ms_per_cycle_by_method")
            if not methods or row["position"] not in (None, "both"):
                continue
            if row["side"] == "elsai" and row["position"] is None:
                continue
            parts = ", ".join(f"{k} {v:.3f}" for k, v in methods.items() if v >= 0.0005)
            lines.append(f"| {row['variant']} | {parts} |")
        lines += [
            "",
            "The price of power-loss durability (elsai fsync=True − fsync=False, same position):",
            "",
            "| location / position | added in the session layer, ms / cycle | added end-to-end, ms / cycle | fsync=True / fsync=False, in the layer |",
            "|---|---|---|---|",
        ]
        for key, d in ov["fsync_price"].items():
            lines.append(
                f"| {key} | {d['in_layer_ms_per_cycle']:.3f} | {d['overhead_ms_per_cycle']:.3f} | "
                f"{d['fsync_true_over_false_in_layer']:.1f}× |"
            )
        lines += [""] + [
            f"- `{loc}`: {info['dir']} ({info['fs']})" for loc, info in ov["locations"].items()
        ]
    rq = results.get("s3_requests")
    if rq:
        lines += [
            "",
            f"## 2. S3 requests per tool cycle (moto server on loopback, {rq['cycles']}-cycle invocation)",
            "",
            "| variant | per tool cycle (steady state) | per invocation, fixed | constructing on a new session | ms / cycle on moto |",
            "|---|---|---|---|---|",
        ]
        for row in rq["rows"]:
            lines.append(
                f"| {row['variant']} | {_fmt_ops(row['per_cycle'])} | {_fmt_ops(row['invocation_fixed'])} | "
                f"{_fmt_ops(row['construct_new_session'])} | {row['ms_per_cycle_on_moto']:.2f} |"
            )
    rs = results.get("resume")
    if rs:
        lines += [
            "",
            f"## 3. Resume of a {rs['messages']:,}-message S3 session (moto server on loopback, median of {rs['repeats']})",
            "",
            "Timed: build the session manager and the agent with the same ids (this loads the session) "
            "+ one invocation that ends the turn. Client: elsai reuses one process-wide S3 client across "
            'managers by default (built once, in the untimed warm-up); "new client" clears that cache '
            "before the run (a first resume in a fresh process). strands builds a new boto3 Session and "
            'client per manager by default; "reused client" passes it a boto session whose `client()` '
            "returns one cached client (strands has no client parameter).",
            "",
            "| variant | median total (ms) | construct (ms) | of which session manager ctor (ms) | of which the LIST (ms) | invoke (ms) | messages loaded | requests |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for row in rs["rows"]:
            lines.append(
                f"| {row['variant']} | {row['median_total_s'] * 1000:.1f} | {row['median_construct_s'] * 1000:.1f} | "
                f"{row['median_manager_s'] * 1000:.1f} | {row['median_list_s'] * 1000:.1f} | "
                f"{row['median_invoke_s'] * 1000:.1f} | {row['messages_loaded']} | {_fmt_ops(row['requests'])} |"
            )
        lines += [
            "",
            "| ratio (elsai / strands, median total) | value |",
            "|---|---|",
        ]
        for key, value in rs["ratios"].items():
            lines.append(f"| {RESUME_RATIOS[key][2]} | {value:.2f} |")
    lines += cold_and_storm.markdown(results)
    lines.append("")
    return "\n".join(lines)
