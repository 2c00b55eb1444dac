"""How early a slice stops, so that whatever it starts can still finish before the deadline.

The loop checks `should_stop` at its two boundaries. After `after_tools` passes the check, a
model call starts; after `after_model` passes it, the tools run. So the stop margin must hold
the longer of the two plus the writes that follow:

    stop margin = max(model call, tool timeout) + safety

"Model call" is the model's read timeout (`Model.read_timeout`; the network providers'
default: 120 s), the longest a call may wait for the service before its client gives up. A slice started with less left than that
would begin a call it cannot finish: the Lambda hits `Sandbox.Timedout` and the retry pays for
the same call again. "Tool timeout" is the runtime's default per-tool timeout (tools may set
their own with `@tool(timeout=...)`; keep those at or below it). "Safety" covers the boundary
writes and returning the result.

The first model call of a slice starts without a check, so a function timeout must fit one
model call plus the margin, or slices would stop before doing anything:

    minimum function timeout = model call + stop margin

`elsai/cdk/config.py` refuses a smaller `functionTimeoutSeconds` at synth time. Every number is a
knob (environment variables below, set by the CDK stack from its context); the old explicit
margin, `ELSAI_SLICE_SAFETY_MARGIN_MS`, still wins when set (local runs with short slices).

A call that times out and is retried by botocore may still overrun; the slice then fails and
Step Functions retries it from the checkpoint, which is slower but loses nothing.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

from elsai.hooks.events import BeforeToolCallEvent
from elsai.hooks.registry import HookProvider, HookRegistry
from elsai.models.base import DEFAULT_READ_TIMEOUT_S, Model
from elsai.tools.timeout import validate_timeout, with_default_timeout

#: The model call budget when a model declares no read timeout: the providers' default.
DEFAULT_MODEL_READ_TIMEOUT_S = DEFAULT_READ_TIMEOUT_S
#: Default per-tool timeout on the serverless runtime.
DEFAULT_TOOL_TIMEOUT_S = 120.0
#: Time for the boundary writes and the handler's return after the last call.
DEFAULT_SAFETY_S = 30.0

ENV_MARGIN_MS = "ELSAI_SLICE_SAFETY_MARGIN_MS"
ENV_SAFETY_S = "ELSAI_SLICE_SAFETY_SECONDS"
ENV_MODEL_READ_TIMEOUT_S = "ELSAI_MODEL_READ_TIMEOUT_SECONDS"
ENV_TOOL_TIMEOUT_S = "ELSAI_TOOL_TIMEOUT_SECONDS"


def stop_margin_seconds(
    model_call_s: float, tool_timeout_s: float | None, safety_s: float
) -> float:
    """The time a slice keeps in hand at a boundary.

    The longer of a model call and a tool call, plus `safety_s`.
    """
    return max(model_call_s, tool_timeout_s or 0.0) + safety_s


def min_function_timeout_seconds(
    model_call_s: float, tool_timeout_s: float | None, safety_s: float
) -> float:
    """The shortest function timeout that fits one model call plus the stop margin."""
    return model_call_s + stop_margin_seconds(model_call_s, tool_timeout_s, safety_s)


class DefaultToolTimeout(HookProvider):
    """Gives every tool without a timeout of its own a limit of `seconds`.

    It acts in BeforeToolCallEvent by swapping in a time-limited copy of the selected tool,
    so the loop and the tools need no change; a tool past the limit becomes an error result
    the model sees (see `elsai.tools.timeout`).
    """

    def __init__(self, seconds: float) -> None:
        """`seconds` must be a finite number above zero."""
        checked = validate_timeout(seconds)
        assert checked is not None
        self.seconds = checked

    def register_hooks(self, registry: HookRegistry) -> None:
        """Add the BeforeToolCallEvent callback."""
        registry.add_callback(BeforeToolCallEvent, self._limit)

    def _limit(self, event: BeforeToolCallEvent) -> None:
        if event.selected_tool is not None:
            event.selected_tool = with_default_timeout(event.selected_tool, self.seconds)


@dataclass(frozen=True)
class DeadlinePolicy:
    """The knobs behind a slice's stop margin and its default tool timeout.

    Attributes:
        safety_s: Seconds for the boundary writes and the return (`ELSAI_SLICE_SAFETY_SECONDS`).
        model_read_timeout_s: The model call budget when the model does not declare a
            `read_timeout` itself (`ELSAI_MODEL_READ_TIMEOUT_SECONDS`).
        tool_timeout_s: Default per-tool timeout; None for none (`ELSAI_TOOL_TIMEOUT_SECONDS`,
            "0" or "none" to disable).
        margin_ms: An explicit stop margin that replaces the derived one
            (`ELSAI_SLICE_SAFETY_MARGIN_MS`).
    """

    safety_s: float = DEFAULT_SAFETY_S
    model_read_timeout_s: float = DEFAULT_MODEL_READ_TIMEOUT_S
    tool_timeout_s: float | None = DEFAULT_TOOL_TIMEOUT_S
    margin_ms: int | None = None

    def __post_init__(self) -> None:
        """Refuse negative or non-finite knobs before any slice relies on them."""
        for name in ("safety_s", "model_read_timeout_s"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number of seconds >= 0, got {value!r}")
        validate_timeout(self.tool_timeout_s)
        if self.margin_ms is not None and self.margin_ms < 0:
            raise ValueError(f"margin_ms must be >= 0, got {self.margin_ms}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> DeadlinePolicy:
        """Read the knobs from the environment (defaults for the unset ones)."""
        env = os.environ if environ is None else environ

        def seconds(name: str, default: float) -> float:
            raw = env.get(name, "").strip()
            try:
                return float(raw) if raw else default
            except ValueError:
                raise ValueError(f"{name} must be a number of seconds, got {raw!r}") from None

        tool_raw = env.get(ENV_TOOL_TIMEOUT_S, "").strip().lower()
        tool: float | None = None
        if tool_raw not in ("0", "none", "off"):
            tool = seconds(ENV_TOOL_TIMEOUT_S, DEFAULT_TOOL_TIMEOUT_S)
        margin_raw = env.get(ENV_MARGIN_MS, "").strip()
        if margin_raw and not margin_raw.isdigit():
            raise ValueError(f"{ENV_MARGIN_MS} must be a whole number of ms, got {margin_raw!r}")
        return cls(
            safety_s=seconds(ENV_SAFETY_S, DEFAULT_SAFETY_S),
            model_read_timeout_s=seconds(ENV_MODEL_READ_TIMEOUT_S, DEFAULT_MODEL_READ_TIMEOUT_S),
            tool_timeout_s=tool,
            margin_ms=int(margin_raw) if margin_raw else None,
        )

    def model_call_seconds(self, model: Model) -> float:
        """The model's own `read_timeout` if it declares one, else `model_read_timeout_s`."""
        declared = model.read_timeout
        if declared is not None and math.isfinite(declared) and declared > 0:
            return float(declared)
        return self.model_read_timeout_s

    def stop_margin_ms(self, model: Model) -> int:
        """How much time must be left at a boundary for the slice to go on."""
        if self.margin_ms is not None:
            return self.margin_ms
        margin = stop_margin_seconds(
            self.model_call_seconds(model), self.tool_timeout_s, self.safety_s
        )
        return math.ceil(margin * 1000)

    def hooks(self) -> list[HookProvider]:
        """The hook providers that enforce the default tool timeout (none if disabled)."""
        return [] if self.tool_timeout_s is None else [DefaultToolTimeout(self.tool_timeout_s)]
