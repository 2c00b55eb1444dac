"""Each interrupt wait is answered once: a create-only record claims the answer.

The jobs API used to rely on `SendTaskSuccess` failing for a used task token. moto does not
fail it, and on AWS a second request can race the first, so the API first claims the wait
with a conditional create under `jobs/<job_id>/answers/` (one key per parked token) and only
then sends the token. A claim stays "sending" until the token is sent; a retry of the *same*
answers may send again (the first attempt may have failed in between), anything else is
refused with `InterruptAlreadyAnsweredError` (HTTP 409).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from elsai.errors import ElsaiError, SessionConflictError
from elsai.serverless.contract import service_keys
from elsai.session.storage.base import StorageBackend

Status = Literal["sending", "sent", "failed"]


class InterruptAlreadyAnsweredError(ElsaiError):
    """The interrupts of this wait were already answered (or are being answered)."""


class AnswerRecord(BaseModel):
    """The stored claim on one wait (`jobs/<job_id>/answers/<token digest>.json`)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="ignore", defer_build=True)
    job_id: str
    status: Status
    answered: list[str]
    digest: str  # of the responses, so a retry of the same answers may send again
    claimed_at: float
    updated_at: float | None = None

    def encode(self) -> bytes:
        """The record as stored."""
        return self.model_dump_json().encode()


def _digest(responses: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(responses, sort_keys=True).encode()).hexdigest()


@dataclass
class AnswerClaim:
    """This request's claim on one wait; mark it sent or failed once the token call returns."""

    storage: StorageBackend
    key: str
    record: AnswerRecord
    version: str

    def _mark(self, status: Status) -> None:
        self.record = self.record.model_copy(update={"status": status, "updated_at": time.time()})
        self.version = self.storage.replace(
            self.key, self.record.encode(), expected_version=self.version
        )

    def sent(self) -> None:
        """The token was sent: the wait is answered for good."""
        self._mark("sent")

    def failed(self) -> None:
        """The token was refused for a reason the caller can fix: let a corrected answer in."""
        self._mark("failed")


def claim_answer(
    storage: StorageBackend, job_id: str, task_token: str, responses: list[dict[str, Any]]
) -> AnswerClaim:
    """Claim the right to send `task_token` with `responses`, or raise if already answered."""
    key = service_keys.job_answer_key(job_id, task_token)
    record = AnswerRecord(
        job_id=job_id,
        status="sending",
        answered=sorted(str(r.get("interruptId")) for r in responses),
        digest=_digest(responses),
        claimed_at=time.time(),
    )
    data = record.encode()
    try:
        return AnswerClaim(storage, key, record, storage.create(key, data))
    except SessionConflictError:
        pass
    found = storage.read(key)
    if found is None:  # vanished between the create and the read: nothing to honour
        return AnswerClaim(storage, key, record, storage.replace(key, data, expected_version=None))
    try:
        existing = AnswerRecord.model_validate_json(found.data)
    except ValidationError as exc:
        raise ValueError(f"answer record {storage.describe(key)} is not valid: {exc}") from None
    if existing.status == "failed" or (
        existing.status == "sending" and existing.digest == record.digest
    ):
        try:
            version = storage.replace(key, data, expected_version=found.version)
        except SessionConflictError:
            raise _answered(job_id, existing) from None
        return AnswerClaim(storage, key, record, version)
    raise _answered(job_id, existing)


def answer_sent(storage: StorageBackend, job_id: str, task_token: str) -> bool:
    """Whether this wait's token was sent with its answers (the wait is closed for good)."""
    key = service_keys.job_answer_key(job_id, task_token)
    found = storage.read(key)
    if found is None:
        return False
    try:
        return AnswerRecord.model_validate_json(found.data).status == "sent"
    except ValidationError as exc:
        raise ValueError(f"answer record {storage.describe(key)} is not valid: {exc}") from None


def _answered(job_id: str, existing: AnswerRecord) -> InterruptAlreadyAnsweredError:
    try:
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(existing.claimed_at))
    except (OverflowError, ValueError, OSError):  # the stored record is untrusted data
        when = "an unknown time"
    return InterruptAlreadyAnsweredError(
        f"job {job_id!r} is no longer waiting for these responses: interrupt(s) "
        f"{existing.answered} were already answered at {when}"
    )
