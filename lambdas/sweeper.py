"""Retention sweeper Lambda: deletes whole sessions that were idle for N days.

Deployed only when ``sessionRetentionDays`` is set; an EventBridge schedule runs it daily.
The logic (and why it never expires single messages) is in ``elsai.serverless.retention``.
Permissions: list the sessions bucket, delete objects under ``session_*`` and each owner's
``owners/*/session_*`` (no version deletes),
list the jobs state machine's RUNNING executions and describe them (a live job's session stays).
"""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel, ConfigDict, StrictBool, ValidationError

from elsai.aws_clients import shared_client
from elsai.serverless.retention import live_sessions, sweep_idle_sessions

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
    return report.model_dump()
