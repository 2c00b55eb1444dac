"""Typed view of the CDK context knobs (cdk.json ``context``, ``-c key=value``).

Context values given on the command line arrive as strings, so every number is
parsed here once instead of at each use site.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import constructs

FALLBACK_MODEL_ID = "us.anthropic.claude-sonnet-4-6"
MAX_LAMBDA_TIMEOUT_SECONDS = 900


def default_model_id() -> str:
    """The SDK's default Bedrock model, so infra and SDK agree without a second constant."""
    try:
        from elsai.models.bedrock import DEFAULT_MODEL_ID
    except Exception:  # the module may not exist yet, or fail to import outside the venv
        return FALLBACK_MODEL_ID
    return str(DEFAULT_MODEL_ID)


@dataclass(frozen=True)
class ElsaiConfig:
    """Deployment settings; defaults mirror cdk.json so tests without it behave the same."""

    model_id: str = FALLBACK_MODEL_ID
    agent_factory: str = "example_agent:build_agent"
    function_timeout_seconds: int = 900
    function_memory_mb: int = 1024
    max_slices: int = 200
    interrupt_wait_seconds: int = 7 * 24 * 3600
    retry_max_attempts: int = 5
    retry_interval_seconds: int = 2
    retry_backoff_rate: float = 2.0
    retry_max_delay_seconds: int = 60
    session_retention_days: int = 90
    noncurrent_version_days: int = 7
    log_retention_days: int = 30
    access_log_retention_days: int = 90
    api_rate_limit: int = 20
    api_burst_limit: int = 40
    log_level: str = "INFO"
    #: Deadline knobs (lambdas/README.md, "Deadlines"), passed to the agent function's env.
    model_read_timeout_seconds: int = 120
    tool_timeout_seconds: int = 120  # 0: no default tool timeout
    slice_safety_seconds: int = 30

    def __post_init__(self) -> None:
        if not 1 <= self.function_timeout_seconds <= MAX_LAMBDA_TIMEOUT_SECONDS:
            raise ValueError(
                f"functionTimeoutSeconds must be 1..{MAX_LAMBDA_TIMEOUT_SECONDS}, "
                f"got {self.function_timeout_seconds}"
            )
        self._check_deadlines()
        if self.max_slices < 1:
            raise ValueError("maxSlices must be >= 1")
        if not 1 <= self.retry_max_attempts <= 20:
            raise ValueError("retryMaxAttempts must be 1..20 (bounded on purpose)")
        if self.interrupt_wait_seconds < 1:
            raise ValueError("interruptWaitSeconds must be >= 1")

    def _check_deadlines(self) -> None:
        """Refuse a function timeout that cannot fit one model call plus the stop margin."""
        from elsai.serverless import min_function_timeout_seconds, stop_margin_seconds

        if self.model_read_timeout_seconds < 1:
            raise ValueError("modelReadTimeoutSeconds must be >= 1")
        if self.tool_timeout_seconds < 0 or self.slice_safety_seconds < 0:
            raise ValueError("toolTimeoutSeconds and sliceSafetySeconds must be >= 0")
        tool = self.tool_timeout_seconds or None
        minimum = min_function_timeout_seconds(
            self.model_read_timeout_seconds, tool, self.slice_safety_seconds
        )
        if self.function_timeout_seconds < minimum:
            margin = stop_margin_seconds(
                self.model_read_timeout_seconds, tool, self.slice_safety_seconds
            )
            raise ValueError(
                f"functionTimeoutSeconds={self.function_timeout_seconds} cannot fit one model "
                f"call ({self.model_read_timeout_seconds} s read timeout) plus the slice stop "
                f"margin ({margin:g} s = max(model call, toolTimeoutSeconds "
                f"{self.tool_timeout_seconds}) + sliceSafetySeconds "
                f"{self.slice_safety_seconds}): use at least {minimum:g}, or lower "
                "modelReadTimeoutSeconds / toolTimeoutSeconds"
            )

    @property
    def agent_deadline_env(self) -> dict[str, str]:
        """The agent function's environment for its stop margin and default tool timeout."""
        return {
            "ELSAI_MODEL_READ_TIMEOUT_SECONDS": str(self.model_read_timeout_seconds),
            "ELSAI_TOOL_TIMEOUT_SECONDS": str(self.tool_timeout_seconds),
            "ELSAI_SLICE_SAFETY_SECONDS": str(self.slice_safety_seconds),
        }

    @property
    def task_timeout_seconds(self) -> int:
        """RunSlice's own timeout: a little above the function's, so Lambda times out first."""
        return self.function_timeout_seconds + 30

    @classmethod
    def from_node(cls, node: constructs.Node) -> ElsaiConfig:
        """Read every knob from construct context, falling back to the dataclass defaults."""

        def get(key: str) -> Any:
            return node.try_get_context(key)

        values: dict[str, Any] = {}
        ints = {
            "functionTimeoutSeconds": "function_timeout_seconds",
            "functionMemoryMb": "function_memory_mb",
            "maxSlices": "max_slices",
            "interruptWaitSeconds": "interrupt_wait_seconds",
            "retryMaxAttempts": "retry_max_attempts",
            "retryIntervalSeconds": "retry_interval_seconds",
            "retryMaxDelaySeconds": "retry_max_delay_seconds",
            "sessionRetentionDays": "session_retention_days",
            "noncurrentVersionDays": "noncurrent_version_days",
            "logRetentionDays": "log_retention_days",
            "accessLogRetentionDays": "access_log_retention_days",
            "apiRateLimit": "api_rate_limit",
            "apiBurstLimit": "api_burst_limit",
            "modelReadTimeoutSeconds": "model_read_timeout_seconds",
            "toolTimeoutSeconds": "tool_timeout_seconds",
            "sliceSafetySeconds": "slice_safety_seconds",
        }
        for key, field in ints.items():
            if get(key) is not None:
                values[field] = int(get(key))
        if get("retryBackoffRate") is not None:
            values["retry_backoff_rate"] = float(get("retryBackoffRate"))
        for key, field in {
            "agentFactory": "agent_factory",
            "logLevel": "log_level",
        }.items():
            if get(key):
                values[field] = str(get(key))
        values["model_id"] = str(get("modelId") or default_model_id())
        return cls(**values)
