"""Retention sweeper Lambda: deletes whole sessions that were idle for N days.

Deployed only when ``sessionRetentionDays`` is set; an EventBridge schedule runs it daily.
The logic (and why it never expires single messages) is in ``elsai.serverless.retention``.
Permissions: list the sessions bucket, delete objects under ``session_*`` and each owner's
``owners/*/session_*`` (no version deletes),
list the jobs state machine's RUNNING executions and describe them (a live job's session stays).

With ``ELSAI_AGENT_FUNCTION_NAME`` and ``ELSAI_AGENT_VERSION_ARN`` set it also deletes agent
function versions no live job uses (``elsai.serverless.version_cleanup``): it may list the
function's versions, delete its qualified ARNs and read the jobs' version records.
"""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, StrictBool, ValidationError

from elsai.aws_clients import shared_client
from elsai.serverless.contract import CURRENT_VERSION_ENV, version_of
from elsai.serverless.retention import live_sessions, sweep_idle_sessions
from elsai.serverless.version_cleanup import clean_versions, live_versions

logger = Logger()
metrics = Metrics()


class SweepRequest(BaseModel):
    """The sweeper's event: the schedule sends ``{}``; a person may ask for a dry run.

    Strict, so ``{"dry_run": "false"}`` is refused rather than read as a (truthy) string.
    """

    model_config = ConfigDict(extra="ignore")
    dry_run: StrictBool = False


def _idle_days() -> int:
    raw = os.environ.get("ELSAI_SESSION_IDLE_DAYS", "")
    if not raw.isdigit() or int(raw) < 1:
        raise RuntimeError(f"ELSAI_SESSION_IDLE_DAYS must be a whole number >= 1, got {raw!r}")
    return int(raw)


def _request(event: Any) -> SweepRequest:
    try:
        return SweepRequest.model_validate(event or {})
    except ValidationError as exc:
        raise ValueError(
            f'the sweeper\'s event must be {{}} or {{"dry_run": true}}: {exc}'
        ) from exc


@logger.inject_lambda_context(log_event=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Sweep once; ``{"dry_run": true}`` as the event reports without deleting."""
    request = _request(event)
    bucket = os.environ["ELSAI_SESSIONS_BUCKET"]
    machine = os.environ["ELSAI_STATE_MACHINE_ARN"]
    report = sweep_idle_sessions(
        shared_client("s3"),
        bucket,
        idle_days=_idle_days(),
        dry_run=request.dry_run,
        live=lambda: live_sessions(shared_client("stepfunctions"), machine),
    )
    metrics.add_metric(
        name="SessionsSwept", unit=MetricUnit.Count, value=len(report.sessions_deleted)
    )
    logger.info("sweep finished", extra=report.model_dump())
    return {**report.model_dump(), **_clean_versions(bucket, machine, request.dry_run)}


def _read(bucket: str) -> Any:
    s3 = shared_client("s3")

    def read(key: str) -> bytes | None:
        try:
            return bytes(s3.get_object(Bucket=bucket, Key=key)["Body"].read())
        except s3.exceptions.NoSuchKey:
            return None

    return read


def _clean_versions(bucket: str, machine: str, dry_run: bool) -> dict[str, Any]:
    """Delete the agent versions no live job uses (when configured); the report, by key."""
    function = os.environ.get("ELSAI_AGENT_FUNCTION_NAME", "")
    current = os.environ.get(CURRENT_VERSION_ENV, "")
    if not function or not current:
        return {}
    live = live_versions(shared_client("stepfunctions"), machine, _read(bucket))
    report = clean_versions(
        shared_client("lambda"), function, current=version_of(current), live=live, dry_run=dry_run
    )
    metrics.add_metric(name="VersionsDeleted", unit=MetricUnit.Count, value=len(report.deleted))
    logger.info("version cleanup finished", extra=report.model_dump())
    return {"versions": report.model_dump()}
