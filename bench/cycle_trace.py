"""Which S3 requests sit on one steady-state tool cycle, with what waits for what.

Used by `bench.s3_latency_and_resume`: one elsai agent per variant runs a few cycles through the latency
proxy; botocore's before-call / after-call events stamp every request (thread, operation, key)
and the workload's tool stamps every tool call. The rows of one steady cycle (tool call 4 to
tool call 5), relative to its start, show the requests in order and which of them overlap.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from bench import elsai_side, workload

CYCLES = 6


def trace_cycle(
    bucket: str, session_id: str, overlap: bool | str, model_s: float, position: str = "both"
) -> dict:
    """Rows (start ms, end ms, thread, what) of one steady tool cycle at `position` on S3."""
    manager = elsai_side.s3_manager(session_id, bucket)
    manager.overlap_bookmark = overlap is not False
    manager.overlap_after_model = overlap is True
    client = manager.storage._client
    events: list[tuple[float, float, str, str]] = []
    t0 = time.perf_counter()

    def params(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["bench_key"] = str(params.get("Key", "")).rsplit("/", 1)[-1]

    def before(context: dict[str, Any], **_: Any) -> None:
        context["bench_t0"] = time.perf_counter() - t0

    def after(model: Any, context: dict[str, Any], **_: Any) -> None:
        name = threading.current_thread().name
        thread = "main" if name == "MainThread" else name.split("_")[0].removeprefix("elsai-")
        what = f"{model.name} {context.get('bench_key', '')}".strip()
        events.append((context.get("bench_t0", 0.0), time.perf_counter() - t0, thread, what))

    client.meta.events.register("provide-client-params.s3.*", params)
    client.meta.events.register("before-call.s3.*", before)
    client.meta.events.register("after-call.s3.*", after)
    agent = elsai_side.make_agent(
        workload.script(CYCLES), session_manager=manager, position=position
    )
    stream = agent.model.stream

    async def timed(*args: Any, **kwargs: Any) -> Any:
        mark = time.perf_counter() - t0
        events.append((mark, mark + model_s, "model", "model call"))
        if model_s:
            import asyncio

            await asyncio.sleep(model_s)
        async for event in stream(*args, **kwargs):
            yield event

    agent.model.stream = timed  # type: ignore[method-assign]
    marks: list[float] = []
    workload.on_tool_call = lambda: marks.append(time.perf_counter() - t0)
    try:
        elsai_side.invoke(agent, workload.PROMPT)
    finally:
        workload.on_tool_call = None
        for name, handler in (("provide-client-params", params), ("before-call", before),
                              ("after-call", after)):  # fmt: skip
            client.meta.events.unregister(f"{name}.s3.*", handler)
    lo, hi = marks[3], marks[4]
    rows = [
        (round((s - lo) * 1000, 1), round((e - lo) * 1000, 1), th, what)
        for s, e, th, what in sorted(events)
        if e >= lo and s < hi and what != "PutObject lease.json"
    ]
    return {"cycle_ms": round((hi - lo) * 1000, 1), "rows": rows}


def markdown(traces: dict[str, dict]) -> list[str]:
    """One table per variant: the requests of one cycle from the tool call on."""
    lines: list[str] = []
    for label, trace in traces.items():
        lines += [
            f"`{label}`: one steady cycle, {trace['cycle_ms']:.1f} ms from tool call to tool call "
            "(times from the tool call; rows that overlap ran at the same time):",
            "",
            "| start ms | end ms | thread | request |",
            "|---|---|---|---|",
        ]
        lines += [f"| {s:.1f} | {e:.1f} | {th} | {what} |" for s, e, th, what in trace["rows"]]
        lines.append("")
    return lines
