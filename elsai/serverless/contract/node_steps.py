"""Models of the steps only a Graph or Swarm job takes: plan, node slice and fold.

Part of the contract (the registry `elsai.serverless.contract.steps` names these models), in a
module of its own so that a single-agent slice's cold start defines none of them: the agent
handler imports it for a Graph's or Swarm's steps only.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from elsai.serverless.contract import (
    MULTI_AGENT_FAILED,
    JobStepRequest,
    NodeSliceStatus,
    RunStatus,
)


class NodeSliceRequest(JobStepRequest):
    """One slice of one node; `started_at` (epoch s) is when the plan started its execution."""

    node: str = Field(min_length=1)
    slice: int = 0
    started_at: float | None = None
    #: Model calls of this node's earlier slices in its branch (the branch adds them up).
    model_calls: int = Field(default=0, ge=0)


class FoldRequest(JobStepRequest):
    """The Map's output: one report per node of the batch planned at `batch`."""

    batch: int
    results: list[dict[str, Any]]
    #: The job's slices and model calls before this batch, and its budgets (None: no budget).
    slice: int = Field(default=0, ge=0)
    model_calls: int = Field(default=0, ge=0)
    max_slices: int | None = Field(default=None, ge=1)
    max_model_calls: int | None = Field(default=None, ge=1)


class PlanResult(BaseModel):
    """What Plan and Fold return; the state machine's Choice branches on `status`."""

    model_config: ClassVar[ConfigDict] = ConfigDict(defer_build=True)

    status: RunStatus
    kind: str
    #: The batch to run: [{"node": name, "started_at": epoch seconds}].
    nodes: list[dict[str, Any]] = Field(default_factory=list)
    batch: int = 0
    error: str = ""
    text: str = ""
    interrupts: list[dict[str, Any]] = Field(default_factory=list)
    node_status: dict[str, str] = Field(default_factory=dict)
    #: Fold only: the node slices the folded batch ran (they count toward the job's budgets
    #: and toward this execution's, which continues in a new one when it is used up).
    slices: int = 0
    #: Fold only: the model calls the folded batch made.
    model_calls: int = 0
    #: The error name a failed run ends with (a budget's, else MULTI_AGENT_FAILED).
    error_type: str = MULTI_AGENT_FAILED


class NodeSliceResult(BaseModel):
    """One node slice's small report: the branch's Choice and the fold read it."""

    model_config: ClassVar[ConfigDict] = ConfigDict(defer_build=True)

    node: str
    status: NodeSliceStatus
    stop_reason: str
    error: str | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    metrics: dict[str, float] = Field(default_factory=dict)
    interrupts: list[dict[str, Any]] = Field(default_factory=list)
    resumed_from_checkpoint: bool = False
    resume_position: str | None = None
    slice: int = 0
    model_calls: int = 0
    #: Model calls of every slice of this node's branch so far, this one included.
    node_model_calls: int = 0
    started_at: float = 0.0
    ended_at: float = 0.0
