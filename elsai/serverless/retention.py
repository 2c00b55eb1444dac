"""Session retention by last activity: a session goes whole, or not at all.

An S3 lifecycle rule acts on each object's own age, so it would expire ``message_0.json`` of a
session that is still in use and leave a transcript with holes. The sweeper instead looks at
every object of a session and deletes the session only when *nothing* in it changed for
``idle_days``. It runs on a schedule (``lambdas/sweeper.py``) and only when a deployment opts
in (``sessionRetentionDays``); by default nothing expires.

A session idle on disk may still belong to a live job: one waiting for a person writes
nothing until the answer comes (up to ``interruptWaitSeconds``). So before deleting, the
sweeper asks Step Functions which executions are RUNNING (a waiting job is one) and keeps
every session they name in their input; the synth also refuses a retention shorter than the
wait (``elsai.cdk.config``).

With tenant isolation (the default) each caller's sessions live under ``owners/<tag>/``: the
sweeper walks the bucket root and every owner prefix, and names an owner's session
``owners/<tag>/<session_id>`` in its report. A live job keeps the session of its own owner
only (the owner tag is in the job id), so two owners' ``customer-42`` are judged apart.

With bucket versioning on, a delete leaves a delete marker; the noncurrent versions then go
by the bucket's noncurrent-version rule, so a mistaken sweep can be undone for that long.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

from pydantic import BaseModel, Field

from elsai.serverless.contract import service_keys

SESSION_PREFIX = "session_"
DELETE_BATCH = 1000  # DeleteObjects' limit per request


class SweepReport(BaseModel):
    """What one sweep saw and did (logged by the sweeper Lambda)."""

    sessions_seen: int = 0
    sessions_deleted: list[str] = Field(default_factory=list)
    #: Idle sessions kept because a running (or waiting) job names them.
    sessions_kept_live: list[str] = Field(default_factory=list)
    objects_deleted: int = 0
    dry_run: bool = False


def live_sessions(sfn: Any, state_machine_arn: str) -> set[str]:
    """Sessions named by the RUNNING executions of the jobs state machine (`session_name`).

    A job waiting for interrupt responses is RUNNING too; a hand-off continuation carries the
    session id in its input like the first execution. An input that names no session (never
    written by elsai) keeps nothing.
    """
    from elsai.serverless.executions import loads
    from elsai.serverless.scoped import job_storage_prefix

    found: set[str] = set()
    paginator = sfn.get_paginator("list_executions")
    for page in paginator.paginate(stateMachineArn=state_machine_arn, statusFilter="RUNNING"):
        for execution in page.get("executions", []):
            described = sfn.describe_execution(executionArn=execution["executionArn"])
            job_input = loads(described.get("input"))
            if isinstance(job_input, dict) and isinstance(job_input.get("session_id"), str):
                # A continuation is named <job_id>-c<N>: the owner tag leads either way.
                prefix = job_storage_prefix(str(execution.get("name", "")))
                found.add(session_name(prefix, job_input["session_id"]))
    return found


def _objects(client: Any, bucket: str, prefix: str) -> Iterator[dict[str, Any]]:
    paginator = client.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
        yield from page.get("Contents", [])


def session_name(owner_prefix: str, session_id: str) -> str:
    """How the sweeper names a session: its id, after its owner's prefix if it has one."""
    return owner_prefix + session_id


def _all_sessions(client: Any, bucket: str) -> Iterator[dict[str, Any]]:
    """Every object under ``session_*`` at the root and under every owner's prefix."""
    yield from _objects(client, bucket, SESSION_PREFIX)
    yield from _objects(client, bucket, service_keys.OWNERS_PREFIX)


def last_activity(objects: Iterable[dict[str, Any]]) -> dict[str, dt.datetime]:
    """Newest ``LastModified`` per session directory (``[owners/<tag>/]session_<id>/``)."""
    newest: dict[str, dt.datetime] = {}
    for obj in objects:
        owner, rest = service_keys.split_owner(str(obj["Key"]))
        directory, sep, _ = rest.partition("/")
        if not sep or not directory.startswith(SESSION_PREFIX):
            continue  # not inside a session directory: never the sweeper's business
        stamp = obj["LastModified"]
        key = owner + directory + "/"
        if key not in newest or stamp > newest[key]:
            newest[key] = stamp
    return newest


def sweep_idle_sessions(
    client: Any,
    bucket: str,
    *,
    idle_days: int,
    now: dt.datetime | None = None,
    dry_run: bool = False,
    live: Callable[[], Collection[str]] | None = None,
) -> SweepReport:
    """Delete every session in which nothing changed for ``idle_days`` days.

    Each candidate is listed again just before its delete, so a session that woke up
    since the scan is kept. Its ``session.json`` goes first: a writer racing the delete
    then fails loudly on a message file that still exists instead of writing into a
    half-deleted transcript. ``live`` returns the session ids of live jobs (see
    `live_sessions`); it is asked once, only when some session is idle, and those are kept.
    """
    if idle_days < 1:
        raise ValueError(f"idle_days must be >= 1, got {idle_days}")
    cutoff = (now or dt.datetime.now(dt.UTC)) - dt.timedelta(days=idle_days)
    activity = last_activity(_all_sessions(client, bucket))
    report = SweepReport(sessions_seen=len(activity), dry_run=dry_run)
    idle = sorted(d for d, newest in activity.items() if newest < cutoff)
    keep = set(live()) if idle and live is not None else set()
    for directory in idle:
        owner, rest = service_keys.split_owner(directory)
        name = session_name(owner, rest.removeprefix(SESSION_PREFIX).rstrip("/"))
        if name in keep:
            report.sessions_kept_live.append(name)
            continue
        current = list(_objects(client, bucket, directory))
        if not current or max(o["LastModified"] for o in current) >= cutoff:
            continue  # became active (or vanished) since the scan
        found = [str(o["Key"]) for o in current]
        if not dry_run:
            # One request for the session record alone: DeleteObjects has no order within.
            first = [k for k in found if k == directory + "session.json"]
            _delete(client, bucket, first)
            _delete(client, bucket, [k for k in found if k not in first])
        report.sessions_deleted.append(name)
        report.objects_deleted += len(found)
    return report


def _delete(client: Any, bucket: str, keys: list[str]) -> None:
    for start in range(0, len(keys), DELETE_BATCH):
        batch = keys[start : start + DELETE_BATCH]
        response = client.delete_objects(
            Bucket=bucket, Delete={"Objects": [{"Key": k} for k in batch], "Quiet": True}
        )
        errors = response.get("Errors") or []
        if errors:
            first = errors[0]
            raise RuntimeError(
                f"could not delete {len(errors)} object(s) of s3://{bucket}: "
                f"{first.get('Key')}: {first.get('Code')} {first.get('Message')}"
            )
