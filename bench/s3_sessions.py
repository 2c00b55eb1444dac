"""S3 sessions on a moto server: requests per tool cycle, and the time to resume a long session.

Part of `python -m bench.run_all` (sections 2 and 3 of results/README.md);
`bench.s3_latency_and_resume` reuses `build_session` and `resume_once`.
"""

from __future__ import annotations

import collections
import gc
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from bench import elsai_side, s3env, strands_side, workload
from bench.common import log, rotated

SIDES: dict[str, Any] = {"elsai": elsai_side, "strands": strands_side}


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


def build_session(
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


def resume_once(
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
        info = build_session(v.side, v.null_cm, bucket, messages, scratch)
        stores[v.store_key] = {
            "bucket": bucket,
            "build": info,
            "snapshot": s3env.BucketSnapshot(admin, bucket),
        }
        log(f"  resume: built {bucket} ({info['messages']} messages, {info['build_s']:.1f}s)")
    shared = strands_side.ReusedClientSession()
    for v in variants:  # warm-up (imports, connection setup code paths)
        store = stores[v.store_key]
        resume_once(v, store["bucket"], counter, shared)
        store["snapshot"].restore()
    samples: dict[str, list[dict[str, Any]]] = {v.label: [] for v in variants}
    for r in range(repeats):
        for v in rotated(variants, r):
            store = stores[v.store_key]
            samples[v.label].append(resume_once(v, store["bucket"], counter, shared))
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
