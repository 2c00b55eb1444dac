"""Retention sweeper Lambda: deletes whole sessions that were idle for N days.

Deployed only when ``sessionRetentionDays`` is set; an EventBridge schedule runs it daily.
The logic (and why it never expires single messages) is in ``elsai.serverless.retention``.
Permissions: list the sessions bucket, delete objects under ``session_*`` (no version deletes).
"""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from elsai.aws_clients import shared_client
from elsai.serverless.retention import sweep_idle_sessions

logger = Logger()
metrics = Metrics()


def _idle_days() -> int:
    raw = os.environ.get("ELSAI_SESSION_IDLE_DAYS", "")
    if not raw.isdigit() or int(raw) < 1:
        raise RuntimeError(f"ELSAI_SESSION_IDLE_DAYS must be a whole number >= 1, got {raw!r}")
    return int(raw)


@logger.inject_lambda_context(log_event=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Sweep once; ``{"dry_run": true}`` as the event reports without deleting."""
    bucket = os.environ["ELSAI_SESSIONS_BUCKET"]
    report = sweep_idle_sessions(
        shared_client("s3"),
        bucket,
        idle_days=_idle_days(),
        dry_run=bool((event or {}).get("dry_run")),
    )
    metrics.add_metric(
        name="SessionsSwept", unit=MetricUnit.Count, value=len(report.sessions_deleted)
    )
    logger.info("sweep finished", extra=report.model_dump())
    return report.model_dump()
