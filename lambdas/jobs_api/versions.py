"""Which agent function version a job runs on: recorded at start, shown, upgraded on request.

A job is pinned to the version current when it started (its execution input names it; see
elsai/cdk/pinning.py). ``POST /jobs/{id}/upgrade`` moves a job to the current version: the
record (``elsai.serverless.versions``) says so, and the job's next resume after a wait for
input runs the new version (the answer names it; the machine's ``UpgradeOnResume``). A job
started with ``version_policy: "upgrade_on_resume"`` does that at every resume by itself.
"""

import json
import os
from datetime import UTC, datetime
from typing import Any

from elsai.errors import SessionConflictError
from elsai.serverless.contract import AGENT_FUNCTION_FIELD, CURRENT_VERSION_ENV, version_of
from elsai.serverless.versions import JobVersion, VersionChange, read_job_version, write_job_version
from elsai_lambdas.jobs_api import aws
from elsai_lambdas.jobs_api.errors import Conflict
from elsai_lambdas.jobs_api.status import public_status


def current_version() -> str | None:
    """The qualified ARN of this deploy's agent function version (None outside a deploy)."""
    return os.environ.get(CURRENT_VERSION_ENV) or None


def record_start(job_id: str, policy: str) -> str | None:
    """Write the new job's record; the version ARN it starts on (None: the machine's default)."""
    arn = current_version()
    if arn is None:
        return None
    record = JobVersion(job_id=job_id, policy=policy, started_on=arn, runs_on=arn)  # type: ignore[arg-type]
    _, tag = read_job_version(aws.storage(), job_id)
    write_job_version(aws.storage(), record, tag)
    return arn


def version_view(job_id: str, execution: dict[str, Any]) -> dict[str, Any]:
    """What GET /jobs/{id} says about versions: the job's, the current one, and the policy."""
    record, _ = read_job_version(aws.storage(), job_id)
    arn = record.runs_on if record else _started_on(execution)
    current = current_version()
    if not isinstance(arn, str):
        return {}
    out: dict[str, Any] = {"version": version_of(arn), "version_policy": "pinned"}
    if record is not None:
        out["version_policy"] = record.policy
        out["upgrades"] = [u.describe() for u in record.upgrades]
    changes = _build_changes(job_id)
    if changes:
        out["build_changes"] = changes
    if current is not None:
        out["current_version"] = version_of(current)
        out["version_is_current"] = arn == current
    return out


def _build_changes(job_id: str) -> list[str]:
    """What the last upgrade changed in the agent, as its first slice on the new code saw it."""
    from pydantic import ValidationError

    from elsai.serverless.contract import service_keys
    from elsai.serverless.fingerprint import FingerprintRecord

    stored = aws.storage().read(service_keys.job_fingerprint_key(job_id))
    if stored is None:
        return []
    try:
        return FingerprintRecord.model_validate_json(stored.data).changes
    except (ValidationError, ValueError):
        return []  # untrusted bytes: say nothing rather than fail the request


def upgrade_job(job_id: str, execution: dict[str, Any]) -> dict[str, Any]:
    """Move a running job (its current ``execution``) to the current version at its next resume.

    Conflict if it ended.
    """
    if execution["status"] != "RUNNING":
        raise Conflict(
            f"job {job_id!r} already ended with status {public_status(execution, job_id)}; "
            "only a running job can be upgraded"
        )
    target = current_version()
    if target is None:
        raise Conflict("this deployment publishes no agent function version to upgrade to")
    change = _move(job_id, execution, target, "upgrade")
    out: dict[str, Any] = {"job_id": job_id, "version": version_of(target), "upgraded": False}
    if change is not None:
        out.update(upgraded=True, event=change.describe())
    return out


def resume_version(job_id: str) -> str | None:
    """The version the answered job resumes on, when it is not the one it waits on."""
    record, _ = read_job_version(aws.storage(), job_id)
    if record is None:
        return None
    if record.policy == "upgrade_on_resume" and (target := current_version()) is not None:
        _move(job_id, None, target, "upgrade_on_resume")
        record, _ = read_job_version(aws.storage(), job_id)
    return record.runs_on if record is not None and record.upgrades else None


def _started_on(execution: dict[str, Any] | None) -> str | None:
    """The version ARN the execution's input names (None: not there, or not readable)."""
    try:
        started = json.loads((execution or {}).get("input") or "null")
    except ValueError:
        return None
    arn = started.get(AGENT_FUNCTION_FIELD) if isinstance(started, dict) else None
    return arn if isinstance(arn, str) else None


def _move(
    job_id: str, execution: dict[str, Any] | None, target: str, reason: str
) -> VersionChange | None:
    """Record the job's move to ``target``; None if it is on it already."""
    storage = aws.storage()
    record, tag = read_job_version(storage, job_id)
    if record is None:  # a job started without a record: its execution names its version
        arn = _started_on(execution) or target
        record = JobVersion(job_id=job_id, started_on=arn, runs_on=arn)
    if record.runs_on == target:
        return None
    change = VersionChange(
        from_arn=record.runs_on, to_arn=target, at=datetime.now(UTC).replace(microsecond=0),
        reason=reason,
    )  # fmt: skip
    record = record.model_copy(update={"runs_on": target, "upgrades": [*record.upgrades, change]})
    try:
        write_job_version(storage, record, tag)
    except SessionConflictError as exc:
        raise Conflict(f"job {job_id!r} was upgraded concurrently; retry") from exc
    return change
