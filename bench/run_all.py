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
import collections
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench import cold_and_storm, elsai_side, s3env, strands_side, workload
from bench.layer_timer import LayerTimer

SIDES: dict[str, Any] = {"elsai": elsai_side, "strands": strands_side}
HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS_DIR = os.path.join(HERE, "results")

TARGET_OVERHEAD_RATIO = 0.5
TARGET_PUT_PER_CYCLE = 4
TARGET_GET_PER_CYCLE = 0
TARGET_RESUME_RATIO = 0.25


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def rotated(items: list[Any], by: int) -> list[Any]:
    by %= max(1, len(items))
    return items[by:] + items[:by]


def fs_type(path: str) -> str:
    try:
        out = subprocess.run(["df", "-T", path], capture_output=True, text=True, check=True).stdout
        return out.splitlines()[1].split()[1]
    except Exception:
        return "unknown"


# ---------------------------------------------------------------------------------------------
# 1. Per-cycle overhead on local files
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileVariant:
    label: str
    side: str
    location: str | None  # None: no session manager at all (the baseline)
    position: str | None = None
    fsync: bool = True  # elsai only: FileSessionManager(fsync=...)


POSITIONS: tuple[str | None, ...] = ("both", "after_tools", None)


def elsai_file_label(loc: str, position: str | None, fsync: bool) -> str:
    return f"elsai / {loc} / {position or 'no checkpoint'} / fsync={fsync}"


def ratio_key(loc: str, position: str | None, fsync: bool) -> str:
    return f"{loc} / {position or 'no checkpoint'} / fsync={fsync}"


def _run_file_variant(
    v: FileVariant, cycles: int, locations: dict[str, str]
) -> tuple[float, LayerTimer | None]:
    """(wall seconds of the invocation, the session-layer timer or None)."""
    side = SIDES[v.side]
    responses = workload.script(cycles)
    storage_dir = None
    manager = None
    if v.location is not None:
        storage_dir = tempfile.mkdtemp(prefix=f"bench-{v.side}-", dir=locations[v.location])
        manager = (
            side.file_manager("overhead", storage_dir, fsync=v.fsync)
            if v.side == "elsai"
            else side.file_manager("overhead", storage_dir)
        )
    kwargs: dict[str, Any] = {"session_manager": manager}
    if v.side == "elsai":
        kwargs["position"] = v.position
    agent = side.make_agent(responses, **kwargs)
    layer = side.time_session_layer(agent, LayerTimer()) if manager is not None else None
    # Start every run with no dirty pages: strands does not fsync, and on ext4 the next fsync
    # (often elsai's, in the following run) would otherwise pay for flushing its files.
    os.sync()
    try:
        seconds, stop = timed(lambda: side.invoke(agent, workload.PROMPT))
        if stop != "end_turn":
            raise RuntimeError(f"{v.label}: invocation ended with {stop!r}")
        if storage_dir is not None:  # the session really holds every message
            folder = os.path.join(
                storage_dir, "session_overhead", "agents", "agent_bench", "messages"
            )
            stored = [m for m in os.listdir(folder) if not m.startswith(".")]
            if len(stored) != workload.messages_written(cycles):
                raise RuntimeError(
                    f"{v.label}: {len(stored)} message files stored, expected {workload.messages_written(cycles)}"
                )
        return seconds, layer
    finally:
        if storage_dir is not None:
            shutil.rmtree(storage_dir, ignore_errors=True)


def bench_overhead(cycles: int, repeats: int, locations: dict[str, str]) -> dict[str, Any]:
    baselines = {side: FileVariant(f"{side} / no session", side, None) for side in SIDES}
    variants: list[FileVariant] = []
    for loc in locations:
        variants.append(FileVariant(f"strands / {loc}", "strands", loc))
        for fsync in (False, True):
            for pos in POSITIONS:
                variants.append(
                    FileVariant(elsai_file_label(loc, pos, fsync), "elsai", loc, pos, fsync)
                )
    for v in [*baselines.values(), *variants]:  # warm-up: imports, caches, first-call costs
        _run_file_variant(v, 5, locations)
    samples: dict[str, list[float]] = {v.label: [] for v in [*baselines.values(), *variants]}
    layer: dict[str, list[float]] = {v.label: [] for v in variants}
    by_method: dict[str, list[dict[str, float]]] = {v.label: [] for v in variants}
    paired: dict[str, list[float]] = {v.label: [] for v in variants}
    for r in range(repeats):
        # Each session run is paired with a run of the same SDK without a session right before
        # it, so the difference compares runs made under the same machine conditions.
        for v in rotated(variants, r):
            base, _ = _run_file_variant(baselines[v.side], cycles, locations)
            wall, inside = _run_file_variant(v, cycles, locations)
            samples[baselines[v.side].label].append(base)
            samples[v.label].append(wall)
            paired[v.label].append(wall - base)
            layer[v.label].append(inside.seconds if inside else 0.0)
            by_method[v.label].append(dict(inside.seconds_by_method) if inside else {})
        log(f"  overhead: repeat {r + 1}/{repeats} done")

    def med(label: str) -> float:
        return statistics.median(samples[label])

    rows = []
    for v in [*baselines.values(), *variants]:
        session = v.location is not None
        rows.append(
            {
                "variant": v.label,
                "side": v.side,
                "location": v.location,
                "position": v.position,
                "fsync": v.fsync if v.side == "elsai" and session else None,
                "median_s": med(v.label),
                "min_s": min(samples[v.label]),
                "max_s": max(samples[v.label]),
                "ms_per_cycle": med(v.label) / cycles * 1000,
                # median over repeats of (run with session - paired run without) / cycles
                "overhead_ms_per_cycle": statistics.median(paired[v.label]) / cycles * 1000
                if session
                else None,
                # wall time spent inside the session layer / cycles (median of the repeats)
                "in_layer_ms_per_cycle": statistics.median(layer[v.label]) / cycles * 1000
                if session
                else None,
                "samples_s": samples[v.label],
                "paired_differences_s": paired.get(v.label),
                "in_layer_samples_s": layer.get(v.label),
                # median over repeats of the time in each session-layer method / cycles
                "in_layer_ms_per_cycle_by_method": {
                    name: statistics.median(m.get(name, 0.0) for m in by_method[v.label])
                    / cycles
                    * 1000
                    for name in sorted({n for m in by_method[v.label] for n in m})
                }
                if session
                else None,
            }
        )
    by_label = {row["variant"]: row for row in rows}
    ratios = {}
    durability = {}
    for loc in locations:
        strands = by_label[f"strands / {loc}"]
        for fsync in (False, True):
            for pos in POSITIONS:
                elsai = by_label[elsai_file_label(loc, pos, fsync)]
                ratios[ratio_key(loc, pos, fsync)] = {
                    "location": loc,
                    "position": pos,
                    "fsync": fsync,
                    "in_layer_ratio": elsai["in_layer_ms_per_cycle"]
                    / strands["in_layer_ms_per_cycle"],
                    "overhead_ratio": elsai["overhead_ms_per_cycle"]
                    / strands["overhead_ms_per_cycle"]
                    if strands["overhead_ms_per_cycle"] > 0
                    else None,
                    "total_ratio": elsai["median_s"] / strands["median_s"],
                }
        for pos in POSITIONS:
            on = by_label[elsai_file_label(loc, pos, True)]
            off = by_label[elsai_file_label(loc, pos, False)]
            # The price of power-loss durability: what fsync=True adds per cycle.
            durability[f"{loc} / {pos or 'no checkpoint'}"] = {
                "in_layer_ms_per_cycle": on["in_layer_ms_per_cycle"] - off["in_layer_ms_per_cycle"],
                "overhead_ms_per_cycle": on["overhead_ms_per_cycle"] - off["overhead_ms_per_cycle"],
                "fsync_true_over_false_in_layer": on["in_layer_ms_per_cycle"]
                / off["in_layer_ms_per_cycle"],
            }
    return {
        "cycles": cycles,
        "repeats": repeats,
        "locations": {loc: {"dir": path, "fs": fs_type(path)} for loc, path in locations.items()},
        "rows": rows,
        "ratios": ratios,
        "fsync_price": durability,
    }


# ---------------------------------------------------------------------------------------------
# 2. S3 requests per tool cycle
# ---------------------------------------------------------------------------------------------


def bench_s3_requests(counter: s3env.RequestCounter, bucket: str, cycles: int) -> dict[str, Any]:
    variants = [
        ("elsai / both", "elsai", "both"),
        ("elsai / after_tools", "elsai", "after_tools"),
        ("elsai / no checkpoint", "elsai", None),
        ("strands", "strands", None),
    ]
    out = []
    for n, (label, side_name, position) in enumerate(variants):
        side = SIDES[side_name]
        session_id = f"requests-{n}"
        kwargs: dict[str, Any] = {"session_manager": None}
        with counter.counting() as construct:
            kwargs["session_manager"] = side.s3_manager(session_id, bucket)
            if side_name == "elsai":
                kwargs["position"] = position
            agent = side.make_agent(workload.script(cycles), **kwargs)
        marks: list[collections.Counter[str]] = []

        def mark(marks: list[collections.Counter[str]] = marks) -> None:
            marks.append(collections.Counter(counter.counts))

        workload.on_tool_call = mark
        try:
            start = time.perf_counter()
            with counter.counting() as invocation:
                stop = side.invoke(agent, workload.PROMPT)
            seconds = time.perf_counter() - start
        finally:
            workload.on_tool_call = None
        if stop != "end_turn" or len(marks) != cycles:
            raise RuntimeError(
                f"{label}: stop={stop!r}, {len(marks)} tool calls for {cycles} cycles"
            )
        # Slice k = what happened between tool call k and tool call k+1: the toolResult message,
        # the after_tools boundary, the model call, the assistant message, the after_model boundary.
        # Skip the first slices, while the 40-message window fills up.
        steady_from = min(cycles - 2, 25)
        slices = [marks[k + 1] - marks[k] for k in range(steady_from, cycles - 1)]
        ops = sorted({op for s in slices for op in s} | set(invocation) | set(construct))
        per_cycle = {op: sum(s[op] for s in slices) / len(slices) for op in ops}
        per_cycle_max = {op: max(s[op] for s in slices) for op in ops}
        fixed = {op: invocation[op] - per_cycle[op] * cycles for op in ops}
        out.append(
            {
                "variant": label,
                "side": side_name,
                "position": position,
                "cycles": cycles,
                "steady_slices": len(slices),
                "per_cycle": per_cycle,
                "per_cycle_max": per_cycle_max,
                "invocation_total": dict(invocation),
                "invocation_fixed": fixed,
                "construct_new_session": dict(construct),
                "ms_per_cycle_on_moto": seconds / cycles * 1000,
            }
        )
    return {"cycles": cycles, "rows": out}


# ---------------------------------------------------------------------------------------------
# 3. Resume time of a 1,000-message S3 session
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResumeVariant:
    label: str
    side: str
    null_cm: bool
    # "sdk": whatever the SDK does by default (elsai: its process-wide client, built once and
    # then reused; strands: a new boto3 Session + client per manager). "new": elsai with its
    # client cache cleared before the run (a first resume in a fresh process). "reused":
    # strands given a boto session whose client() returns one cached client.
    client: str = "sdk"

    @property
    def store_key(self) -> tuple[str, bool]:
        return (self.side, self.null_cm)


RESUME_ROWS = {
    "elsai_window": "elsai / default (window 40)",
    "strands_window": "strands / default (window 40)",
    "elsai_window_new": "elsai / default, new client (cache cleared)",
    "strands_window_reused": "strands / default, reused client",
    "elsai_null": "elsai / NullConversationManager",
    "strands_null": "strands / NullConversationManager",
    "strands_null_reused": "strands / NullConversationManager, reused client",
}
#: ratio key -> (elsai row, strands row, what it compares)
RESUME_RATIOS = {
    "default": (
        "elsai_window",
        "strands_window",
        "defaults as shipped (elsai reuses its process-wide client; strands builds one per manager)",
    ),
    "default_both_reuse_client": (
        "elsai_window",
        "strands_window_reused",
        "defaults, both reusing one S3 client (like-for-like)",
    ),
    "default_both_new_client": (
        "elsai_window_new",
        "strands_window",
        "defaults, both building a new S3 client (like-for-like, first resume in a process)",
    ),
    "null": ("elsai_null", "strands_null", "NullConversationManager as shipped"),
    "null_both_reuse_client": (
        "elsai_null",
        "strands_null_reused",
        "NullConversationManager, both reusing one S3 client",
    ),
}


def _build_session(
    side_name: str, null_cm: bool, bucket: str, messages: int, scratch: str
) -> dict[str, Any]:
    """Run a real agent for (messages/100) invocations of 49 tool cycles = `messages` messages.

    It runs against a FileSessionManager on a scratch directory (fast), whose tree is then
    uploaded as-is: both SDKs use the same relative keys on disk and on S3 and write the
    same bytes to both, so the bucket holds exactly what an S3 run would have written.
    """
    side = SIDES[side_name]
    per_invocation_cycles = 49  # 1 prompt + 98 + 1 answer = 100 messages per invocation
    invocations, rest = divmod(messages, workload.messages_written(per_invocation_cycles))
    if rest:
        raise ValueError("messages must be a multiple of 100")
    storage_dir = tempfile.mkdtemp(prefix=f"build-{side_name}-", dir=scratch)
    kwargs: dict[str, Any] = {
        "session_manager": side.file_manager("resume", storage_dir),
        "null_cm": null_cm,
    }
    if side_name == "elsai":
        kwargs["position"] = "both"
    agent = side.make_agent(
        workload.multi_invocation_script(invocations, per_invocation_cycles), **kwargs
    )
    start = time.perf_counter()
    for _ in range(invocations):
        if side.invoke(agent, workload.PROMPT) != "end_turn":
            raise RuntimeError(f"building the {side_name} session failed")
    built_in = time.perf_counter() - start
    admin = s3env.admin_client()
    uploaded = s3env.upload_tree(admin, bucket, storage_dir)
    shutil.rmtree(storage_dir, ignore_errors=True)
    stored = len(s3env.list_keys(admin, bucket, "session_resume/agents/agent_bench/messages/"))
    if stored != messages:
        raise RuntimeError(f"{side_name}: {stored} messages stored, expected {messages}")
    return {"build_s": built_in, "objects": uploaded, "messages": stored}


def _resume_once(
    v: ResumeVariant, bucket: str, counter: s3env.RequestCounter, reusing_session: Any
) -> dict[str, Any]:
    side = SIDES[v.side]
    kwargs: dict[str, Any] = {"null_cm": v.null_cm}
    if v.side == "elsai":
        kwargs["position"] = "both"
    holder: dict[str, Any] = {}
    if v.client == "new":
        elsai_side.forget_shared_clients()
    boto = reusing_session if v.client == "reused" else None

    with counter.counting() as requests:
        gc.collect()
        t0 = time.perf_counter()
        manager = side.s3_manager("resume", bucket, boto_session=boto)
        tm = time.perf_counter()
        holder["agent"] = side.make_agent(
            [workload.final_response("Resumed and done.")], session_manager=manager, **kwargs
        )
        t1 = time.perf_counter()
        loaded = side.message_count(holder["agent"])
        stop = side.invoke(holder["agent"], "One more thing, then stop.")
        t2 = time.perf_counter()
    if stop != "end_turn":
        raise RuntimeError(f"{v.label}: resume invocation ended with {stop!r}")
    return {
        "total_s": t2 - t0,
        "construct_s": t1 - t0,
        "manager_s": tm - t0,
        "invoke_s": t2 - t1,
        "loaded": loaded,
        "requests": dict(requests),
        "list_s": counter.last_seconds.get("ListObjectsV2", 0.0),
        "s3_call_s": counter.last_seconds,
    }


def bench_resume(
    counter: s3env.RequestCounter, messages: int, repeats: int, scratch: str
) -> dict[str, Any]:
    variants = [
        ResumeVariant(RESUME_ROWS["elsai_window"], "elsai", False),
        ResumeVariant(RESUME_ROWS["strands_window"], "strands", False),
        ResumeVariant(RESUME_ROWS["elsai_window_new"], "elsai", False, "new"),
        ResumeVariant(RESUME_ROWS["strands_window_reused"], "strands", False, "reused"),
        ResumeVariant(RESUME_ROWS["elsai_null"], "elsai", True),
        ResumeVariant(RESUME_ROWS["strands_null"], "strands", True),
        ResumeVariant(RESUME_ROWS["strands_null_reused"], "strands", True, "reused"),
    ]
    admin = s3env.admin_client()
    stores: dict[tuple[str, bool], dict[str, Any]] = {}
    for v in variants:
        if v.store_key in stores:
            continue
        bucket = f"resume-{v.side}-{'null' if v.null_cm else 'window'}"
        s3env.create_bucket(admin, bucket)
        info = _build_session(v.side, v.null_cm, bucket, messages, scratch)
        stores[v.store_key] = {
            "bucket": bucket,
            "build": info,
            "snapshot": s3env.BucketSnapshot(admin, bucket),
        }
        log(f"  resume: built {bucket} ({info['messages']} messages, {info['build_s']:.1f}s)")
    shared = strands_side.ReusedClientSession()
    for v in variants:  # warm-up (imports, connection setup code paths)
        store = stores[v.store_key]
        _resume_once(v, store["bucket"], counter, shared)
        store["snapshot"].restore()
    samples: dict[str, list[dict[str, Any]]] = {v.label: [] for v in variants}
    for r in range(repeats):
        for v in rotated(variants, r):
            store = stores[v.store_key]
            samples[v.label].append(_resume_once(v, store["bucket"], counter, shared))
            store["snapshot"].restore()
        log(f"  resume: repeat {r + 1}/{repeats} done")
    for store in stores.values():
        store["snapshot"].verify()
    rows = []
    for v in variants:
        s = samples[v.label]
        rows.append(
            {
                "variant": v.label,
                "side": v.side,
                "null_cm": v.null_cm,
                "client": v.client,
                "median_total_s": statistics.median(x["total_s"] for x in s),
                "median_construct_s": statistics.median(x["construct_s"] for x in s),
                "median_invoke_s": statistics.median(x["invoke_s"] for x in s),
                "median_manager_s": statistics.median(x["manager_s"] for x in s),
                "median_list_s": statistics.median(x["list_s"] for x in s),
                "min_total_s": min(x["total_s"] for x in s),
                "max_total_s": max(x["total_s"] for x in s),
                "messages_loaded": s[0]["loaded"],
                "requests": s[0]["requests"],
                "samples_total_s": [x["total_s"] for x in s],
                "s3_call_s_first_repeat": s[0]["s3_call_s"],
            }
        )
    by = {row["variant"]: row for row in rows}

    def ratio(a: str, b: str) -> float:
        return by[a]["median_total_s"] / by[b]["median_total_s"]

    ratios = {
        key: ratio(RESUME_ROWS[a], RESUME_ROWS[b]) for key, (a, b, _) in RESUME_RATIOS.items()
    }
    builds = {f"{k[0]} / {'null' if k[1] else 'window'}": st["build"] for k, st in stores.items()}
    return {
        "messages": messages,
        "repeats": repeats,
        "rows": rows,
        "ratios": ratios,
        "builds": builds,
    }


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


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


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


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
        "## Targets",
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


def environment() -> dict[str, Any]:
    from importlib.metadata import version

    try:
        commit = subprocess.run(
            ["git", "-C", os.path.dirname(HERE), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", os.path.dirname(HERE), "status", "--porcelain", "--", "elsai"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        commit = commit + ("+uncommitted changes in elsai/" if dirty else "")
    except Exception:
        commit = "unknown"
    return {
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "elsai_commit": commit,
        "strands_version": version("strands-agents"),
        "moto_version": version("moto"),
        "boto3_version": version("boto3"),
        "load_average_at_start": os.getloadavg(),
    }


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
    with open(os.path.join(args.out, "README.md" if not suffix else "latest-quick.md"), "w") as f:
        f.write(text)
    log(
        f"wrote {args.out}/latest{suffix}.json and the markdown summary ({results['duration_s']:.0f} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
