"""The client side of LocalRuntime: the real `api_handler` in process, and views of what a job left.

`LocalRuntime.jobs` is the jobs API's one client shape (`elsai.serverless.contract.jobs_api.
JobsApi`, the same class `elsai.client.http_client` returns) on an in-process transport: each
request becomes an API Gateway REST proxy event for the real `api_handler`, so what a test or
script sees is what a client of the deployed API sees (validation, Idempotency-Key, status
mapping, WAITING_FOR_INPUT). The views are read-only (history, slices, the tool ledger, the
session's S3 objects).
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from elsai.local.invoker import InvocationRecord
from elsai.local.progress import Progress
from elsai.local.shapes import DEFAULT_CALLER, LocalLambdaContext, rest_proxy_event
from elsai.serverless.contract.http import Reply, Request, resource_of
from elsai.serverless.contract.jobs_api import Job, JobsApi
from elsai.serverless.contract.steps import RUN_SLICE

TERMINAL = frozenset({"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "CANCELLED"})
_ROWS = JobsApi.operations()


def gateway_resource(path: str) -> tuple[str, dict[str, str] | None]:
    """The API Gateway resource a path falls under, and its path parameters (the table's)."""
    found = resource_of(_ROWS, path)
    if found is None:  # the handler answers 404 (or 405) for it, as behind API Gateway
        return "/{proxy+}", {"proxy": path.lstrip("/")}
    resource, values = found
    return resource, values or None


def proxy_reply(response: dict[str, Any]) -> Reply:
    """A Lambda proxy response as the client receives it (headers joined, body decoded)."""
    headers = {str(k): str(v) for k, v in (response.get("headers") or {}).items()}
    for name, values in (response.get("multiValueHeaders") or {}).items():
        headers.setdefault(str(name), ", ".join(str(v) for v in values))
    data = response.get("body") or ""
    raw = base64.b64decode(data) if response.get("isBase64Encoded") else data.encode()
    return Reply(int(response["statusCode"]), headers, raw)


class InProcessTransport:
    """Hands each request to the runtime's real API handler; records starts and answers.

    `caller` names who the requests come from (an IAM user of the local account); None: the
    runtime's `caller` at the time of the request.
    """

    def __init__(self, runtime: JobsApiMixin, caller: str | None = None) -> None:
        """Send through `runtime` (its handler, its progress)."""
        self.runtime, self.caller = runtime, caller

    def send(self, request: Request) -> Reply:
        """One request through the handler; a started or answered job is told to `progress`."""
        body = None if request.body is None else request.body.decode("utf-8")
        response = self.runtime.api_response(
            request.method, request.path, body=body, headers=dict(request.headers),
            query=dict(request.query) or None, caller=self.caller,
        )  # fmt: skip
        reply = proxy_reply(response)
        op = request.operation
        if op is not None and reply.status < 400 and op.id in ("startJob", "answerJob"):
            sent = json.loads(body or "{}")
            if op.id == "startJob":
                self.runtime.progress.job_started(reply.json(), sent["prompt"])
            else:
                self.runtime.progress.answered(reply.json()["job_id"], sent["responses"])
        return reply


class JobsApiMixin:
    """Needs `self._api` (the imported api_handler module) and `self.progress`.

    `caller` names who the requests come from (an IAM user of the local account); set it to
    try tenant isolation with two callers (`elsai local run --caller NAME`), or ask
    `jobs_as(name)` for a client acting as another.
    """

    _api: Any
    progress: Progress
    caller: str = DEFAULT_CALLER

    @property
    def jobs(self) -> JobsApi:
        """The jobs API, as a deployed stack's client sees it (``rt.jobs.start("...")``)."""
        return JobsApi(InProcessTransport(self))

    def jobs_as(self, caller: str) -> JobsApi:
        """The jobs API as local caller `caller` sees it (tenant isolation)."""
        return JobsApi(InProcessTransport(self, caller))

    def api_response(self, method: str, path: str, *, body: str | None = None,
                     headers: dict[str, str] | None = None, query: dict[str, str] | None = None,
                     caller: str | None = None) -> dict[str, Any]:  # fmt: skip
        """The real API handler's Lambda proxy response (status, headers, body) to one request.

        `path` is the request's path as sent (percent-encoded); the event names the resource
        and path parameters API Gateway would. `caller` overrides `self.caller`.
        """
        resource, path_parameters = gateway_resource(path)
        event = rest_proxy_event(
            method,
            path,
            resource=resource,
            body=body,
            headers=headers,
            path_parameters=path_parameters,
            query=query,
            caller=caller or self.caller,
        )
        response: dict[str, Any] = self._api.handler(
            event, LocalLambdaContext("elsai-api", 29_000, 512)
        )
        return response

    def wait(self, job_id: str, timeout: float = 120, *, poll: float = 0.1) -> Job:
        """Poll GET /jobs/{id} until the job ended or waits for (new) interrupt responses.

        Waiting needs both the API's WAITING_FOR_INPUT and a park the runtime saw and nobody
        answered yet: the API turns WAITING only once Step Functions recorded the submitted
        task, a moment after the park Lambda returned, and right after an answer it may still
        show the old wait.
        """
        deadline = time.monotonic() + timeout
        jobs = self.jobs
        while True:
            job = jobs.get(job_id)
            if job.status in TERMINAL:
                self.progress.job_ended(job.as_dict())
                return job
            if job.status == "WAITING_FOR_INPUT" and self.progress.waiting_for_input(job_id):
                return job
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} still {job.status} after {timeout} s")
            time.sleep(poll)


class InspectMixin:
    """What a job left behind: history, invocations, the tool ledger, session objects."""

    s3: Any
    sfn: Any
    bucket: str
    state_machine_arn: str
    ledger_path: Path
    invocations: list[InvocationRecord]
    caller: str = DEFAULT_CALLER  # whose storage the views read (JobsApiMixin's caller)
    api_env: dict[str, str]

    def execution_arn(self, job_id: str) -> str:
        """The ARN of job `job_id`'s first execution (the job id is its name)."""
        return self.state_machine_arn.replace(":stateMachine:", ":execution:") + f":{job_id}"

    def history(self, job_id: str) -> list[dict[str, Any]]:
        """The execution's Step Functions history events (moto's, which follow AWS's shape)."""
        events = self.sfn.get_execution_history(
            executionArn=self.execution_arn(job_id), maxResults=1000
        )["events"]
        return [dict(e) for e in events]

    def slices(self, job_id: str) -> list[InvocationRecord]:
        """The job's slice invocations, retries included, in the order they started."""
        return [
            r for r in self.invocations if r.info.job_id == job_id and r.info.action == RUN_SLICE
        ]

    def ledger(self) -> list[dict[str, Any]]:
        """Every tool run in every child (written by the child right after the tool returned)."""
        if not self.ledger_path.exists():
            return []
        return [
            json.loads(line) for line in self.ledger_path.read_text().splitlines() if line.strip()
        ]

    @property
    def storage_prefix(self) -> str:
        """Where `caller`'s sessions and job records live ("" without tenant isolation).

        ``owners/<tag>/`` with isolation (the service's default), asked of the real API
        code (its identity rules), not recomputed here.
        """
        from elsai_lambdas.jobs_api import owner

        if getattr(self, "api_env", {}).get(owner.TENANCY_ENV, "").lower() != "owner":
            return ""
        event = rest_proxy_event("GET", "/jobs", resource="/jobs", caller=self.caller)
        return owner.identify(event).prefix

    def session_files(self, session_id: str) -> Iterator[tuple[str, int]]:
        """(key, size) of every object the session holds: what a crash left behind.

        Keys are relative to the caller's `storage_prefix`, as the spec's layout names them.
        """
        prefix = self.storage_prefix
        paginator = self.s3.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=f"{prefix}session_{session_id}/"):
            for obj in page.get("Contents", []):
                yield obj["Key"][len(prefix) :], int(obj["Size"])

    def read_json(self, key: str) -> Any:
        """One JSON object of the caller's storage (`key` relative to `storage_prefix`), parsed."""
        full_key = self.storage_prefix + key
        return json.loads(self.s3.get_object(Bucket=self.bucket, Key=full_key)["Body"].read())
