"""The job's version record: which agent function version it runs on, its policy, its upgrades.

A job is pinned to the version it started on (elsai/cdk/pinning.py): the execution's input
names it. The jobs API also keeps ``jobs/<job_id>/version.json`` (``service_keys.job_version_key``):
the version the job started on, the one it runs on from its next resume, its
``version_policy`` and every upgrade (from, to, when). A missing or unreadable record means
"never upgraded": the job stays on the version its execution names.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from elsai.serverless.contract import VersionPolicy, service_keys, version_of
from elsai.session.storage.base import StorageBackend


class VersionChange(BaseModel):
    """One upgrade of a job, as its job event says it."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    from_arn: str = Field(min_length=1, max_length=256)
    to_arn: str = Field(min_length=1, max_length=256)
    at: datetime
    reason: str = Field(default="upgrade", max_length=64)

    def describe(self) -> str:
        """``upgraded v3 -> v4``: what ``GET /jobs/{id}/events`` shows."""
        return f"upgraded v{version_of(self.from_arn)} -> v{version_of(self.to_arn)}"


class JobVersion(BaseModel):
    """The stored record (``jobs/<job_id>/version.json``)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="forbid")

    job_id: str = Field(min_length=1, max_length=128)
    policy: VersionPolicy = "pinned"
    started_on: str = Field(min_length=1, max_length=256)
    runs_on: str = Field(min_length=1, max_length=256)
    upgrades: list[VersionChange] = Field(default_factory=list, max_length=1000)


def read_job_version(storage: StorageBackend, job_id: str) -> tuple[JobVersion | None, str | None]:
    """The record and its stored version tag; (None, tag) when absent or corrupt."""
    stored = storage.read(service_keys.job_version_key(job_id))
    if stored is None:
        return None, None
    try:
        record = JobVersion.model_validate_json(stored.data)
    except (ValidationError, ValueError):
        return None, stored.version  # untrusted bytes: no record, never a crash
    return (record if record.job_id == job_id else None), stored.version


def write_job_version(storage: StorageBackend, record: JobVersion, expected: str | None) -> None:
    """Replace the record if it is still the one read (``expected``); a conflict raises."""
    data = record.model_dump_json().encode()
    storage.replace(service_keys.job_version_key(record.job_id), data, expected_version=expected)
