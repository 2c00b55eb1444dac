"""Fault injection for local Lambda invocations: what to do to which attempt of which slice.

A plan is a function of the invocation (job, slice, attempt): tests and the demo decide
"kill the first attempt of slice 0 inside its 2nd tool call" without touching the handler.
The chosen `Fault` travels to the child as one environment variable.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass

from elsai.serverless.contract.steps import RUN_SLICE, STEPS, StepKind

FAULT_ENV = "ELSAI_LOCAL_FAULT"


@dataclass(frozen=True)
class InvocationInfo:
    """Which Lambda invocation is about to run (`attempt` counts from 1 per job/slice/action)."""

    job_id: str
    session_id: str
    agent_id: str
    action: str  # one of elsai.serverless.contract.steps.ACTIONS
    slice: int
    attempt: int
    tool_runs: int = 0  # tool runs this job already did (in any process), from the ledger

    @property
    def kind(self) -> StepKind | None:
        """The registry's kind of the step (a slice runs tools, a park waits); None: unknown."""
        step = STEPS.get(self.action)
        return step.kind if step is not None else None


@dataclass(frozen=True)
class Fault:
    """What happens to one invocation.

    kill_in_tool: SIGKILL the process inside the N-th tool call, after the real tool ran,
        so its side effect happened but its result was never persisted (the worst case).
    raise_message: raise `InjectedFailure(raise_message)` before the agent is built.
    timeout_seconds: this invocation's function timeout (its deadline), e.g. to force
        `continue` at every boundary, or with `tool_seconds` a hard timeout mid-tool.
    tool_seconds: each tool call first waits this long (a slow dependency), before its effect.
    barrier: a directory; the child waits after loading the session until `parties`
        children arrived there (or `barrier_seconds` passed): makes write races deterministic.
    kill_after_seconds: SIGKILL the process this long after the agent was built, wherever
        it is then (mid-model call, mid-S3 write, between boundaries): a crash at a random point.
    """

    kill_in_tool: int | None = None
    raise_message: str | None = None
    timeout_seconds: float | None = None
    tool_seconds: float | None = None
    barrier: str | None = None
    parties: int = 2
    barrier_seconds: float = 5.0
    kill_after_seconds: float | None = None

    def describe(self) -> str:
        """The fault in words, for the run's progress lines."""
        parts = []
        if self.kill_in_tool is not None:
            parts.append(f"SIGKILL inside tool call {self.kill_in_tool}")
        if self.raise_message:
            parts.append(f"raise InjectedFailure({self.raise_message!r})")
        if self.timeout_seconds is not None:
            parts.append(f"function timeout {self.timeout_seconds:g} s")
        if self.tool_seconds is not None:
            parts.append(f"tools take {self.tool_seconds:g} s")
        if self.kill_after_seconds is not None:
            parts.append(f"SIGKILL after {self.kill_after_seconds:.3g} s")
        if self.barrier:
            parts.append(f"wait for {self.parties} racers after loading the session")
        return ", ".join(parts) or "none"

    def to_env(self) -> str:
        """The fault as the one environment variable the child reads."""
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls, value: str | None) -> Fault:
        """The child's fault from that variable (no fault when unset or empty)."""
        return cls(**json.loads(value)) if value else cls()


FaultPlan = Callable[[InvocationInfo], "Fault | None"]


def kill_in_tool(n: int = 2, *, slice: int = 0, attempt: int = 1) -> FaultPlan:
    """Kill the given attempt of the given slice inside its n-th tool call."""

    def plan(info: InvocationInfo) -> Fault | None:
        if info.action == RUN_SLICE and info.slice == slice and info.attempt == attempt:
            return Fault(kill_in_tool=n)
        return None

    return plan


def kill_in_job_tool(n: int = 2) -> FaultPlan:
    """Kill the process inside the job's n-th tool run, whichever slice that falls in; once.

    A Graph's or Swarm's node slices count too: their tools are the job's tools.
    """

    def plan(info: InvocationInfo) -> Fault | None:
        if info.kind == "slice" and info.tool_runs < n:
            return Fault(kill_in_tool=n - info.tool_runs)
        return None

    return plan


def always_fail(message: str = "injected failure: this step always fails") -> FaultPlan:
    """Every slice attempt raises: the state machine's retry budget runs out."""

    def plan(info: InvocationInfo) -> Fault | None:
        return Fault(raise_message=message) if info.action == RUN_SLICE else None

    return plan


def every_slice(fault: Fault) -> FaultPlan:
    """The same fault for every slice attempt (e.g. a short deadline)."""
    return lambda info: fault if info.action == RUN_SLICE else None


def random_kills(
    *, seed: int, kill_rate: float, max_kills_per_job: int, kill_window_s: float
) -> FaultPlan:
    """Storm kills: slice attempts killed at random, reproducibly.

    Each slice attempt is killed with probability `kill_rate`, at most `max_kills_per_job`
    times per job, either inside one of its first two tool calls (after the side effect) or
    at a uniform random time within `kill_window_s` of its start.

    Draws depend on (seed, session, slice, attempt) only: with fixed session ids a plan
    replays the same way.
    """
    import random

    planned: dict[str, int] = {}

    def plan(info: InvocationInfo) -> Fault | None:
        if info.action != RUN_SLICE or planned.get(info.job_id, 0) >= max_kills_per_job:
            return None
        draw = random.Random(f"{seed}:{info.session_id}:{info.slice}:{info.attempt}")
        if draw.random() >= kill_rate:
            return None
        planned[info.job_id] = planned.get(info.job_id, 0) + 1
        if draw.random() < 0.5:
            return Fault(kill_in_tool=draw.randint(1, 2))
        return Fault(kill_after_seconds=draw.uniform(0.0, kill_window_s))

    return plan
