"""The client side of LocalRuntime: the real `api_handler` and views of what a job left.

The jobs API is the real `api_handler` called with API Gateway events; the views are
read-only (history, slices, the tool ledger, the session's S3 objects).

Calling the handler (not boto3 directly) keeps the local runtime honest about what clients
see: validation, Idempotency-Key, status mapping, WAITING_FOR_INPUT.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from elsai.local.invoker import InvocationRecord
from elsai.local.progress import Progress
from elsai.local.shapes import DEFAULT_CALLER, LocalLambdaContext, rest_proxy_event
from elsai.serverless.contract.steps import RUN_SLICE

TERMINAL = frozenset({"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED", "CANCELLED"})


class LocalApiError(Exception):
    """The jobs API answered with a 4xx/5xx."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status: int = status
        self.body: Any = body


class JobsApiMixin:
    """Needs `self._api` (the imported api_handler module) and `self.progress`.

    `caller` names who the requests come from (an IAM user of the local account); set it to
    try tenant isolation with two callers (`elsai local run --caller NAME`).
    """

    _api: Any
    progress: Progress
    caller: str = DEFAULT_CALLER

    def api(self, method: str, path: str, *, resource: str, body: Any = None, headers: dict[str, str] | None = None,
            path_parameters: dict[str, str] | None = None, query: dict[str, str] | None = None,
            caller: str | None = None) -> tuple[int, Any]:  # fmt: skip
        """Call the real API handler with an API Gateway REST proxy event: (status, parsed body)."""
        response = self.api_response(method, path, resource=resource, body=body, headers=headers,
                                     path_parameters=path_parameters, query=query, caller=caller)  # fmt: skip
        raw = response.get("body") or "null"
        try:
            return int(response["statusCode"]), json.loads(raw)
        except ValueError:
            return int(response["statusCode"]), raw

    def api_response(self, method: str, path: str, *, resource: str, body: Any = None,
                     headers: dict[str, str] | None = None, path_parameters: dict[str, str] | None = None,
                     query: dict[str, str] | None = None, caller: str | None = None) -> dict[str, Any]:  # fmt: skip
        """The real API handler's Lambda proxy response (status, headers, body) to one request.

        `caller` overrides `self.caller` for this request.
        """
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

    @staticmethod
    def _ok(status: int, body: Any) -> Any:
        if status >= 400:
            raise LocalApiError(status, body)
        return body

    def start_job(self, prompt: str, session_id: str | None = None, agent_id: str = "agent",
                  idempotency_key: str | None = None, version_policy: str | None = None) -> dict[str, Any]:  # fmt: skip
        """POST /jobs; returns the API's body ({job_id, session_id, agent_id, status})."""
        body: dict[str, Any] = {"prompt": prompt, "agent_id": agent_id}
        if version_policy is not None:
            body["version_policy"] = version_policy
        if session_id is not None:
            body["session_id"] = session_id
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key is not None else None
        job = dict(
            self._ok(*self.api("POST", "/jobs", resource="/jobs", body=body, headers=headers))
        )
        self.progress.job_started(job, prompt)
        return job

    def job(self, job_id: str) -> dict[str, Any]:
        """GET /jobs/{job_id}."""
        return dict(
            self._ok(
                *self.api(
                    "GET",
                    f"/jobs/{job_id}",
                    resource="/jobs/{job_id}",
                    path_parameters={"job_id": job_id},
                )
            )
        )

    def answer(self, job_id: str, responses: list[dict[str, Any]]) -> dict[str, Any]:
        """POST /jobs/{job_id}/responses with [{"interruptId", "response"}, ...]."""
        out = self._ok(*self.api("POST", f"/jobs/{job_id}/responses", resource="/jobs/{job_id}/responses",
                                 path_parameters={"job_id": job_id}, body={"responses": responses}))  # fmt: skip
        self.progress.answered(job_id, responses)
        return dict(out)

    def upgrade(self, job_id: str) -> dict[str, Any]:
        """POST /jobs/{job_id}/upgrade: the job moves to the current version at its next resume."""
        return dict(self._ok(*self.api("POST", f"/jobs/{job_id}/upgrade", resource="/jobs/{job_id}/upgrade",
                                       path_parameters={"job_id": job_id})))  # fmt: skip

    def events(
        self, job_id: str, after: str | None = None, limit: int | None = None
    ) -> dict[str, Any]:
        """GET /jobs/{job_id}/events: a page of progress events and the cursor to continue from."""
        query = {k: str(v) for k, v in (("after", after), ("limit", limit)) if v is not None}
        return dict(self._ok(*self.api("GET", f"/jobs/{job_id}/events", resource="/jobs/{job_id}/events",
                                       path_parameters={"job_id": job_id}, query=query)))  # fmt: skip

    def cancel(self, job_id: str) -> dict[str, Any]:
        """DELETE /jobs/{job_id}: stop a running job (it then reports CANCELLED)."""
        return dict(self._ok(*self.api("DELETE", f"/jobs/{job_id}", resource="/jobs/{job_id}",
                                       path_parameters={"job_id": job_id})))  # fmt: skip

    def session(self, session_id: str) -> dict[str, Any]:
        """GET /sessions/{session_id}."""
        return dict(self._ok(*self.api("GET", f"/sessions/{session_id}", resource="/sessions/{session_id}",
                                       path_parameters={"session_id": session_id})))  # fmt: skip

    def wait(self, job_id: str, timeout: float = 120, *, poll: float = 0.1) -> dict[str, Any]:
        """Poll GET /jobs/{id} until the job ended or waits for (new) interrupt responses.

        Waiting needs both the API's WAITING_FOR_INPUT and a park the runtime saw and nobody
        answered yet: the API turns WAITING only once Step Functions recorded the submitted
        task, a moment after the park Lambda returned, and right after an answer it may still
        show the old wait.
        """
        deadline = time.monotonic() + timeout
        while True:
            job = self.job(job_id)
            if job["status"] in TERMINAL:
                self.progress.job_ended(job)
                return job
            if job["status"] == "WAITING_FOR_INPUT" and self.progress.waiting_for_input(job_id):
                return job
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} still {job['status']} after {timeout} s")
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
