"""One invocation of 10,000 tool cycles: flat stack, flat memory, pooled worker threads.

Times are printed for the reader, never asserted (a loaded machine must not fail the suite).
"""

from __future__ import annotations

import sys
import threading
import time
import tracemalloc
from typing import Any

from elsai import Agent, tool
from elsai.conversation import SlidingWindowConversationManager
from elsai.models import ScriptedModel
from tests.support.transcripts import assert_valid_transcript

CYCLES = 10_000
EARLY, LATE = 2_000, CYCLES - 1
# asyncio's default executor has at most min(32, cpus + 4) threads.
POOL_BOUND = 32


def frame_depth() -> int:
    depth, frame = 0, sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back  # type: ignore[assignment]
    return depth


def test_ten_thousand_cycles_run_with_a_flat_stack_and_flat_memory() -> None:
    # Fixed-size records only: a growing list here would itself show up as memory growth.
    depths = {"min": 10**9, "max": 0, "count": 0}
    memory: dict[int, int] = {}

    @tool
    async def tick(i: int) -> int:
        """A trivial tool. Async, so it runs on the loop's own stack."""
        depth = frame_depth()
        depths["min"], depths["max"] = min(depths["min"], depth), max(depths["max"], depth)
        depths["count"] += 1
        if i in (EARLY, LATE):
            memory[i] = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
        return i

    script: list[Any] = [
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": f"t{i}", "name": "tick", "input": {"i": i}}}],
        }
        for i in range(CYCLES)
    ]
    script.append("all ticks done")
    model = ScriptedModel(script, record=False)
    agent = Agent(model=model, tools=[tick])
    assert isinstance(agent.conversation_manager, SlidingWindowConversationManager)

    tracemalloc.start()
    try:
        started = time.perf_counter()
        result = agent("tick 10,000 times")
        elapsed = time.perf_counter() - started
        peak_after_early = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert str(result) == "all ticks done"
    assert result.stop_reason == "end_turn"
    assert result.metrics.cycles == CYCLES + 1
    assert result.metrics.tool_calls == CYCLES
    assert result.metrics.model_calls == CYCLES + 1
    assert model.requests == []  # record=False keeps nothing

    # No recursion: the tool's stack is exactly as deep in the last cycle as in the first.
    assert depths["count"] == CYCLES
    assert depths["min"] == depths["max"], depths
    assert depths["max"] < 100

    # Flat memory: what is alive after cycle 10,000 is what was alive after cycle 2,000,
    # and no moment in between needed much more.
    growth = memory[LATE] - memory[EARLY]
    assert growth < 64 * 1024, f"memory grew by {growth} bytes between cycle {EARLY} and {LATE}"
    assert peak_after_early - memory[EARLY] < 512 * 1024, (peak_after_early, memory[EARLY])

    assert len(agent.messages) <= agent.conversation_manager.window_size
    assert_valid_transcript(agent.messages)

    print(
        f"\n10k cycles: {elapsed:.2f}s (with tracemalloc), stack depth {depths['max']}, "
        f"memory after {EARLY}: {memory[EARLY] / 1024:.0f} KiB, after {LATE}: {memory[LATE] / 1024:.0f} KiB, "
        f"growth {growth} B, peak {peak_after_early / 1024:.0f} KiB"
    )


def test_ten_thousand_cycles_with_a_sync_tool_reuse_a_small_thread_pool() -> None:
    # Thread objects are kept alive, so distinct ids mean distinct threads (no id reuse).
    threads: list[threading.Thread] = []

    @tool
    def noop(i: int) -> str:
        """Does nothing, in a worker thread."""
        threads.append(threading.current_thread())
        return "ok"

    script: list[Any] = [
        {
            "role": "assistant",
            "content": [{"toolUse": {"toolUseId": f"n{i}", "name": "noop", "input": {"i": i}}}],
        }
        for i in range(CYCLES)
    ]
    agent = Agent(model=ScriptedModel([*script, "done"], record=False), tools=[noop])
    main_thread = threading.current_thread()
    started = time.perf_counter()
    result = agent("go")
    elapsed = time.perf_counter() - started
    print(f"\n10k cycles, sync tool, no tracing: {elapsed:.2f}s")
    assert result.metrics.cycles == CYCLES + 1
    assert len(threads) == CYCLES
    # A thread per call would cost 10,000 thread starts; the calls share a bounded pool instead.
    workers = {id(t) for t in threads}
    assert main_thread not in threads and len(workers) <= POOL_BOUND, len(workers)
