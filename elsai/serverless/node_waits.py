"""A Graph/Swarm job's waits by node: one record per job, so each node's answer is its own.

A node that asks a person ends its branch; Fold records its wait here (`record_waits`) and
Plan keeps scheduling every node that does not depend on it. Only when nothing but waits is
left does the job park one task token (`park_nodes`). The jobs API stores answers for any
subset of the waits (`answer_node_waits`) and, when the job is parked, sends the token so
Plan runs the answered nodes with their own answers while the others keep waiting.

All writes are conditional on the version read (a bounded retry on a lost race), so the API
and the job never overwrite each other: either the park sees the answer (and does not
sleep), or the answer sees the park's token (and wakes it).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from elsai.errors import ElsaiError, SessionConflictError
from elsai.ids import validate_id
from elsai.serverless.answers import InterruptAlreadyAnsweredError
from elsai.serverless.contract import (
    AnswersWaitingError,
    ParkRequest,
    ParkResult,
    service_keys,
)
from elsai.session.storage.base import StorageBackend

if TYPE_CHECKING:
    from elsai.serverless.step_context import StepContext

T = TypeVar("T")
#: Lost compare-and-swap races retried before giving up (writers are the API and one job).
MAX_ATTEMPTS = 8


class UnknownInterruptError(ElsaiError):
    """An answer names an interrupt no node of the job asked (or misses one a node asked)."""


class NodeWait(BaseModel):
    """One node's open wait: what it asked, and the answers once they arrived."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="ignore", defer_build=True)

    node: str
    interrupts: list[dict[str, Any]]
    #: The fold's batch that recorded it (a retried fold keeps the wait and its answers).
    batch: int = 0
    answers: list[dict[str, Any]] | None = None
    digest: str | None = None
    answered_at: float | None = None

    def ids(self) -> set[str]:
        """The interrupt ids this wait expects answers for."""
        return {str(i["id"]) for i in self.interrupts if i.get("id")}


class NodeWaits(BaseModel):
    """Every open node wait of a job, and the token of its park (None while it runs)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="ignore", defer_build=True)

    job_id: str
    waits: dict[str, NodeWait] = Field(default_factory=dict)
    task_token: str | None = None
    parked_at: float | None = None
    #: Interrupt ids whose answers were already used: a second answer is a conflict.
    closed: list[str] = Field(default_factory=list)

    def open_interrupts(self) -> list[dict[str, Any]]:
        """The interrupts not answered yet, each naming its node."""
        return [
            {**i, "node": w.node} for w in self.waits.values() if w.answers is None
            for i in w.interrupts
        ]  # fmt: skip

    def answered(self) -> dict[str, list[dict[str, Any]]]:
        """The answered nodes' responses, by node: what the next batch gives them."""
        return {n: list(w.answers) for n, w in self.waits.items() if w.answers is not None}


def read_waits(storage: StorageBackend, job_id: str) -> NodeWaits | None:
    """The job's record, or None if no node of it ever waited."""
    found = _read(storage, job_id)
    return found[0] if found is not None else None


def _read(storage: StorageBackend, job_id: str) -> tuple[NodeWaits, str] | None:
    key = service_keys.node_waits_key(validate_id(job_id, "job_id"))
    stored = storage.read(key)
    if stored is None:
        return None
    try:
        return NodeWaits.model_validate_json(stored.data), stored.version
    except ValidationError as exc:
        raise ValueError(f"node waits record {storage.describe(key)} is invalid: {exc}") from None


def _update(storage: StorageBackend, job_id: str, change: Callable[[NodeWaits], T]) -> T:
    """Apply `change` to the current record and write it conditionally; re-read on a lost race."""
    key = service_keys.node_waits_key(validate_id(job_id, "job_id"))
    for attempt in range(MAX_ATTEMPTS):
        found = _read(storage, job_id)
        record, version = found if found is not None else (NodeWaits(job_id=job_id), None)
        result = change(record)
        data = record.model_dump_json().encode()
        try:
            if version is None:
                storage.create(key, data)
            else:
                storage.replace(key, data, expected_version=version)
        except SessionConflictError:
            if attempt == MAX_ATTEMPTS - 1:
                raise
            continue
        return result
    raise AssertionError("unreachable")  # pragma: no cover


def record_waits(
    storage: StorageBackend,
    job_id: str,
    interrupts: list[dict[str, Any]],
    folded: Iterable[str],
    batch: int,
) -> NodeWaits:
    """Match the record to a step outcome: its interrupts (each naming its node) are the waits.

    A node of the `folded` batch ran again: its old wait (and the answers it used) is closed,
    and any new interrupt of it opens a fresh wait. A node that did not run keeps its wait.
    """
    asked: dict[str, list[dict[str, Any]]] = {}
    for interrupt in interrupts:
        asked.setdefault(str(interrupt["node"]), []).append(
            {k: v for k, v in interrupt.items() if k != "node"}
        )
    ran = set(folded)

    def change(record: NodeWaits) -> NodeWaits:
        waits: dict[str, NodeWait] = {}
        for node, wait in record.waits.items():
            if node in asked and (node not in ran or wait.batch == batch):
                waits[node] = wait  # not re-run (or this fold was retried): still waiting
            elif wait.answers is not None:
                record.closed = sorted({*record.closed, *wait.ids()})
        for node, items in asked.items():
            waits.setdefault(node, NodeWait(node=node, interrupts=items, batch=batch))
        record.waits = waits
        return record

    return _update(storage, job_id, change)


def park_nodes(storage: StorageBackend, job_id: str, task_token: str) -> NodeWaits:
    """Store the token the job waits on now; AnswersWaitingError if answers already arrived."""

    def change(record: NodeWaits) -> NodeWaits:
        if record.answered():
            raise AnswersWaitingError(
                f"job {job_id!r}: node(s) {sorted(record.answered())} were answered before "
                "the job parked; planning again runs them"
            )
        record.task_token, record.parked_at = task_token, time.time()
        return record

    return _update(storage, job_id, change)


def serve_park_nodes(request: ParkRequest, context: StepContext) -> ParkResult:
    """The ``park_nodes`` step: park a Graph/Swarm job on its nodes' waits.

    Raises AnswersWaitingError when answers are already stored (the machine plans again).
    """
    manager = context.session_manager(request.session_id, request.job_id)
    park_nodes(manager.storage, request.job_id, request.task_token)
    context.log("graph/swarm job waiting for its nodes' interrupt responses")
    return ParkResult()


def forget_token(storage: StorageBackend, job_id: str, task_token: str) -> None:
    """The token was sent: later answers only store theirs (a newer park's token stays)."""

    def change(record: NodeWaits) -> None:
        if record.task_token == task_token:
            record.task_token = None

    _update(storage, job_id, change)


def _digest(responses: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(responses, sort_keys=True).encode()).hexdigest()


def answer_node_waits(
    storage: StorageBackend, job_id: str, responses: list[dict[str, Any]]
) -> NodeWaits:
    """Store answers for any subset of the open waits; each wait is answered once.

    Every interrupt of a node named must be answered together (a node resumes once). The
    same answers sent again are accepted (a client retry); other answers to an answered wait
    raise InterruptAlreadyAnsweredError. Returns the record written: its `task_token` is the
    park to wake, if the job is parked.
    """

    def change(record: NodeWaits) -> NodeWaits:
        groups = _by_node(record, responses)
        for node, answers in groups.items():
            wait = record.waits[node]
            if wait.answers is not None:
                if wait.digest != _digest(answers):
                    raise InterruptAlreadyAnsweredError(
                        f"job {job_id!r}: node {node!r}'s interrupts {sorted(wait.ids())} "
                        "were already answered"
                    )
                continue
            missing = sorted(wait.ids() - {str(r["interruptId"]) for r in answers})
            if missing:
                raise UnknownInterruptError(
                    f"answer every interrupt of node {node!r}: missing {missing}"
                )
            wait.answers, wait.digest, wait.answered_at = answers, _digest(answers), time.time()
        return record

    return _update(storage, job_id, change)


def _by_node(record: NodeWaits, responses: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    owner = {iid: w.node for w in record.waits.values() for iid in w.ids()}
    groups: dict[str, list[dict[str, Any]]] = {}
    for response in responses:
        iid = str(response["interruptId"])
        if iid in record.closed:
            raise InterruptAlreadyAnsweredError(
                f"job {record.job_id!r}: interrupt {iid!r} was already answered"
            )
        if iid not in owner:
            raise UnknownInterruptError(f"interrupt {iid!r} is not one this job's nodes asked")
        groups.setdefault(owner[iid], []).append(response)
    return groups


__all__ = [
    "AnswersWaitingError",
    "NodeWait",
    "NodeWaits",
    "UnknownInterruptError",
    "answer_node_waits",
    "forget_token",
    "park_nodes",
    "read_waits",
    "record_waits",
]
