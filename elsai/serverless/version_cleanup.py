"""Version cleanup: delete agent function versions no live job uses, never the current one.

Every deploy publishes a version and pinned jobs keep invoking the one they started on, so
versions pile up. The sweeper removes a published version only when all of these hold:

- it is not the current version (the API starts new jobs on it) nor the newest one (a deploy
  in progress may not have told the sweeper yet);
- no RUNNING execution of the jobs state machine (running, or waiting for a person) names it
  in its input's ``agent_function``;
- no such job's version record (``jobs/<job_id>/version.json``) names it as the version it
  started on or runs on (an upgrade recorded before the job's next resume).

A version record that cannot be read or parsed is untrusted: it keeps nothing, and the
execution's own input still protects the version the job runs on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from elsai.serverless.contract import AGENT_FUNCTION_FIELD, version_of

#: Reads one stored object's bytes (None: absent); the sweeper passes an S3 reader.
Reader = Callable[[str], bytes | None]


class VersionCleanupReport(BaseModel):
    """What one cleanup did: the versions kept (and why) and those deleted."""

    current: str
    live: list[str] = Field(default_factory=list)
    deleted: list[str] = Field(default_factory=list)
    dry_run: bool = False


def live_versions(sfn: Any, state_machine_arn: str, read: Reader) -> set[str]:
    """The versions RUNNING jobs' inputs and version records name."""
    from elsai.serverless.contract import service_keys
    from elsai.serverless.executions import loads
    from elsai.serverless.scoped import job_storage_prefix
    from elsai.serverless.versions import JobVersion

    found: set[str] = set()
    paginator = sfn.get_paginator("list_executions")
    for page in paginator.paginate(stateMachineArn=state_machine_arn, statusFilter="RUNNING"):
        for execution in page.get("executions", []):
            described = sfn.describe_execution(executionArn=execution["executionArn"])
            job_input = loads(described.get("input"))
            if not isinstance(job_input, dict):
                continue
            arn = job_input.get(AGENT_FUNCTION_FIELD)
            if isinstance(arn, str):
                found.add(version_of(arn))
            job_id = job_input.get("job_id")
            if not isinstance(job_id, str):
                continue
            prefix = job_storage_prefix(str(execution.get("name", "")))
            try:
                data = read(prefix + service_keys.job_version_key(job_id))
                record = JobVersion.model_validate_json(data) if data is not None else None
            except ValueError:  # an invalid id or a corrupt record: keeps nothing more
                record = None
            if record is not None:
                found |= {version_of(record.started_on), version_of(record.runs_on)}
    return found


def published_versions(client: Any, function_name: str) -> list[str]:
    """The function's published versions (``$LATEST`` is not one), oldest first."""
    versions: list[str] = []
    paginator = client.get_paginator("list_versions_by_function")
    for page in paginator.paginate(FunctionName=function_name):
        versions += [v["Version"] for v in page.get("Versions", []) if v["Version"].isdigit()]
    return sorted(set(versions), key=int)


def clean_versions(
    client: Any,
    function_name: str,
    *,
    current: str,
    live: set[str],
    dry_run: bool = False,
) -> VersionCleanupReport:
    """Delete the published versions that are neither current, newest nor ``live``."""
    if not current.isdigit():
        raise ValueError(f"the current agent version must be a number, got {current!r}")
    versions = published_versions(client, function_name)
    keep = {current, *live} | ({versions[-1]} if versions else set())
    doomed = [v for v in versions if v not in keep]
    if not dry_run:
        for version in doomed:
            client.delete_function(FunctionName=function_name, Qualifier=version)
    return VersionCleanupReport(
        current=current,
        live=sorted((set(live) & set(versions)) - {current}, key=int),
        deleted=doomed,
        dry_run=dry_run,
    )
