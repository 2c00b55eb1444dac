"""The shared workload: one script of model responses, one trivial tool, for both frameworks.

Every benchmark drives an agent through `cycles` tool cycles: each scripted model response
holds exactly one toolUse of `bump`, and the last response is a short text that ends the turn.
Both frameworks get the same responses, streamed in the same chunk sizes, so the work outside
persistence is as close to identical as two different SDKs allow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

TOOL_NAME = "bump"
PROMPT = "Run the bump tool until you are told to stop."
FINAL_TEXT = "All steps are done."
# Chunking shared by both scripted models (elsai's ScriptedModel defaults: text 8, tool input 32).
TEXT_CHUNK = 8
TOOL_INPUT_CHUNK = 32


#: Called (when set) at the start of every tool execution, by both frameworks' `bump` tools.
#: The S3 benchmark uses it to cut the request stream into exact per-cycle slices.
on_tool_call: Callable[[], None] | None = None


def bump_impl(n: int) -> str:
    if on_tool_call is not None:
        on_tool_call()
    return f"bumped {n}"


def tool_use_response(i: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {"toolUse": {"toolUseId": f"tooluse_{i:06d}", "name": TOOL_NAME, "input": {"n": i}}}
        ],
    }


def final_response(text: str = FINAL_TEXT) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"text": text}]}


def script(cycles: int) -> list[dict[str, Any]]:
    """`cycles` toolUse responses, then one final text response (cycles + 1 model calls)."""
    return [tool_use_response(i) for i in range(cycles)] + [final_response()]


def messages_written(cycles: int) -> int:
    """Messages one invocation of `script(cycles)` appends: prompt, 2 per cycle, final answer."""
    return 1 + 2 * cycles + 1


def multi_invocation_script(invocations: int, cycles: int) -> list[dict[str, Any]]:
    """Responses for `invocations` consecutive invocations of `cycles` tool cycles each."""
    out: list[dict[str, Any]] = []
    for k in range(invocations):
        out.extend(tool_use_response(k * cycles + i) for i in range(cycles))
        out.append(final_response(f"Batch {k} done."))
    return out
