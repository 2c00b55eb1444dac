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

# A Standard execution holds at most 25,000 history events. Measured on the synthesized
# definition (tests/unit/cdk/test_continuation.py pins these): a slice costs 11 events, each
# retry of a task 3 more, an interrupt round (park + answer + resume) 6 more. A job continues
# in a new execution (its continuation) before the worst case of these could reach the cap.
HISTORY_EVENT_CAP = 25_000
HISTORY_EVENT_RESERVE = 200  # start/end, continuation and failure states
EVENTS_PER_SLICE = 11
EVENTS_PER_RETRY = 3
EVENTS_PER_INTERRUPT_ROUND = 8  # the wait, the answer, and UpgradeOnResume (pinning.py)
# A Graph's or Swarm's batch (Plan, Map, Fold and their routing) costs this many events on top
# of its node slices, each of which costs no more than a slice (same test file pins both).
EVENTS_PER_BATCH = 22
MAX_EXECUTIONS_PER_JOB = 100  # GET /jobs/{id} follows at most this many continuations


def default_model_id() -> str:
    """The SDK's default Bedrock model, so infra and SDK agree without a second constant."""
    try:
        from elsai.models.bedrock import DEFAULT_MODEL_ID
    except Exception:  # the module may not exist yet, or fail to import outside the venv
        return FALLBACK_MODEL_ID
    return str(DEFAULT_MODEL_ID)


def _flag(key: str, value: Any) -> bool:
    """A boolean context value: JSON true/false, or "true"/"false" from ``-c key=value``."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"{key} must be true or false, got {value!r}")
    return text == "true"


@dataclass(frozen=True)
class ElsaiConfig:
    """Deployment settings; defaults mirror cdk.json so tests without it behave the same."""

    model_id: str = FALLBACK_MODEL_ID
    #: ``module:function`` building the agent; DurableAgentService refuses to synthesize without one.
    agent_factory: str = ""
    function_timeout_seconds: int = 900
    function_memory_mb: int = 1024
    max_slices: int = 200
    interrupt_wait_seconds: int = 7 * 24 * 3600
    retry_max_attempts: int = 5
    retry_interval_seconds: int = 2
    retry_backoff_rate: float = 2.0
    retry_max_delay_seconds: int = 60
    # None = sessions are kept until deleted; N = a daily sweeper deletes a session whole
    # once nothing in it changed for N days (never by object age).
    session_retention_days: int | None = None
    noncurrent_version_days: int = 7
    log_retention_days: int = 30
    access_log_retention_days: int = 90
    api_rate_limit: int = 20
    api_burst_limit: int = 40
    log_level: str = "INFO"
    #: Deadline knobs (docs/operations.md, "Deadlines"), passed to the agent function's env.
    model_read_timeout_seconds: int = 120
    tool_timeout_seconds: int = 120  # 0: no default tool timeout
    slice_safety_seconds: int = 30
    # None = no reserved concurrency (a fresh account's quota of 10 cannot spare any).
    max_concurrent_slices: int | None = None
    throttle_retry_max_attempts: int = 8
    throttle_retry_interval_seconds: int = 10
    throttle_retry_max_delay_seconds: int = 300
    max_model_calls: int | None = None  # per job; None = no model-call budget
    slices_per_execution: int | None = None  # None = the largest safe value
    #: Tenant isolation (docs/security.md, "Tenant isolation and the trust model"): callers
    #: own their jobs and sessions (owner-prefixed storage, 404 for others) and each slice
    #: runs its agent with credentials scoped to its own job (elsai/cdk/tenancy.py). On by
    #: default, like S3 Block Public Access: ``tenantIsolation=false`` is the explicit opt-out
    #: for a single trusted caller, and synth warns about it.
    tenant_isolation: bool = True
    admin_arns: tuple[str, ...] = ()  # IAM principals that may see every job
    cognito_user_pool_arn: str | None = None  # Cognito authorizer instead of IAM (SigV4)
    admin_groups: tuple[str, ...] = ()  # Cognito groups that may see every job
    #: Lambda SnapStart for the agent function (docs/deploying.md, "Cold start, tracing and
    #: SnapStart"): a published version + "live" alias, which the state machine then invokes.
    snap_start: bool = False
    #: Graph jobs: how many ready nodes run at once (the node Map's MaxConcurrency).
    max_parallel_nodes: int = 4

    def __post_init__(self) -> None:
        if not 1 <= self.function_timeout_seconds <= MAX_LAMBDA_TIMEOUT_SECONDS:
            raise ValueError(
                f"functionTimeoutSeconds must be 1..{MAX_LAMBDA_TIMEOUT_SECONDS}, "
                f"got {self.function_timeout_seconds}"
            )
        self._check_deadlines()
        if self.max_slices < 1:
            raise ValueError("maxSlices must be >= 1")
        if not 1 <= self.max_parallel_nodes <= 40:
            raise ValueError(
                f"maxParallelNodes must be 1..40 (the Map's MaxConcurrency), got {self.max_parallel_nodes}"
            )
        if not 1 <= self.retry_max_attempts <= 20:
            raise ValueError("retryMaxAttempts must be 1..20 (bounded on purpose)")
        if self.interrupt_wait_seconds < 1:
            raise ValueError("interruptWaitSeconds must be >= 1")
        self._check_budgets()

    def _check_budgets(self) -> None:
        if self.session_retention_days is not None and self.session_retention_days < 1:
            raise ValueError("sessionRetentionDays must be >= 1 (leave it unset to keep sessions)")
        wait_days = self.interrupt_wait_seconds / 86_400
        if self.session_retention_days is not None and self.session_retention_days < wait_days:
            raise ValueError(
                f"sessionRetentionDays ({self.session_retention_days}) is shorter than the longest "
                f"interrupt wait (interruptWaitSeconds={self.interrupt_wait_seconds}, "
                f"{wait_days:g} days): a session idle while its job waits for a person would be "
                f"swept. Set sessionRetentionDays >= {-(-self.interrupt_wait_seconds // 86_400)} "
                "or shorten interruptWaitSeconds"
            )
        if self.max_concurrent_slices is not None and self.max_concurrent_slices < 1:
            raise ValueError("maxConcurrentSlices must be >= 1 (leave it unset for no cap)")
        if not 1 <= self.throttle_retry_max_attempts <= 20:
            raise ValueError("throttleRetryMaxAttempts must be 1..20 (bounded on purpose)")
        if self.max_model_calls is not None and self.max_model_calls < 1:
            raise ValueError("maxModelCalls must be >= 1 (leave it unset for no budget)")
        cap = self.max_safe_slices_per_execution
        if self.slices_per_execution is not None and not 1 <= self.slices_per_execution <= cap:
            raise ValueError(
                f"slicesPerExecution must be 1..{cap}: with retryMaxAttempts="
                f"{self.retry_max_attempts} and throttleRetryMaxAttempts="
                f"{self.throttle_retry_max_attempts} a slice may cost "
                f"{self.worst_events_per_slice} of an execution's {HISTORY_EVENT_CAP} events"
            )
        limit = self.execution_slices * MAX_EXECUTIONS_PER_JOB
        if self.max_slices > limit:
            raise ValueError(
                f"maxSlices must be <= {limit} ({MAX_EXECUTIONS_PER_JOB} executions of "
                f"{self.execution_slices} slices each)"
            )

    @property
    def worst_events_per_slice(self) -> int:
        """History events one slice may cost when every retry and an interrupt happen."""
        retries = self.retry_max_attempts + self.throttle_retry_max_attempts
        # RunSlice and the park step may each use all their retries.
        return EVENTS_PER_SLICE + EVENTS_PER_INTERRUPT_ROUND + 2 * retries * EVENTS_PER_RETRY

    @property
    def max_safe_slices_per_execution(self) -> int:
        """Most slices one execution may run before the job must continue in a new one."""
        usable = HISTORY_EVENT_CAP - HISTORY_EVENT_RESERVE
        return max(1, usable // self.worst_events_per_slice)

    @property
    def slices_per_batch(self) -> int:
        """What a multi-agent batch's own states cost, counted in slices (rounded up)."""
        return -(-EVENTS_PER_BATCH // EVENTS_PER_SLICE)

    @property
    def execution_slices(self) -> int:
        """Slices per execution: the knob, or the largest safe value."""
        return self.slices_per_execution or self.max_safe_slices_per_execution

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
            "maxConcurrentSlices": "max_concurrent_slices",
            "throttleRetryMaxAttempts": "throttle_retry_max_attempts",
            "throttleRetryIntervalSeconds": "throttle_retry_interval_seconds",
            "throttleRetryMaxDelaySeconds": "throttle_retry_max_delay_seconds",
            "maxModelCalls": "max_model_calls",
            "slicesPerExecution": "slices_per_execution",
            "maxParallelNodes": "max_parallel_nodes",
        }
        for key, field in ints.items():
            # "" or 0 from the CLI means "unset" for the optional knobs.
            if get(key) is not None and str(get(key)) != "":
                values[field] = int(get(key))
        for field in ("session_retention_days", "max_concurrent_slices", "max_model_calls"):
            if values.get(field) == 0:
                values[field] = None
        if get("retryBackoffRate") is not None:
            values["retry_backoff_rate"] = float(get("retryBackoffRate"))
        for key, field in {
            "agentFactory": "agent_factory",
            "logLevel": "log_level",
        }.items():
            if get(key):
                values[field] = str(get(key))
        if get("snapStart") is not None:
            values["snap_start"] = _flag("snapStart", get("snapStart"))
        values["model_id"] = str(get("modelId") or default_model_id())
        values.update(_tenancy_values(get))
        return cls(**values)


def _tenancy_values(get: Any) -> dict[str, Any]:
    """The tenant isolation knobs: a flag, and lists given as JSON lists or comma-separated."""

    def names(key: str) -> tuple[str, ...]:
        value = get(key)
        items = value if isinstance(value, list) else str(value or "").split(",")
        return tuple(str(item).strip() for item in items if str(item).strip())

    flag = str(get("tenantIsolation")).strip().lower()
    if flag not in ("none", "", "true", "false"):
        raise ValueError(f"tenantIsolation must be true or false, got {get('tenantIsolation')!r}")
    return {
        "tenant_isolation": flag != "false",  # on unless explicitly turned off
        "admin_arns": names("adminArns"),
        "cognito_user_pool_arn": str(get("cognitoUserPoolArn") or "") or None,
        "admin_groups": names("adminGroups"),
    }
