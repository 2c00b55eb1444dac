"""An HTTP client of the jobs API: SigV4-signed for API Gateway, plain for the local API.

Shared by `elsai jobs` and `elsai console`, so both act with the same code and the same auth.

Signing uses botocore's own signer and the usual credential chain (env, profile, SSO, role),
so whatever works for the AWS CLI works here. The API URL comes from `--api-url`, from the
stack's ``ApiUrl`` output (CloudFormation DescribeStacks), or, for `--local`, from the URL
`elsai jobs serve` wrote down.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

_REGION_IN_URL = re.compile(r"\.execute-api\.([a-z0-9-]+)\.amazonaws\.com")
LOCAL_URL_ENV = "ELSAI_LOCAL_API_URL"


#: The header a local jobs API (`elsai jobs serve`) reads the acting caller from.
CALLER_HEADER = "X-Elsai-Local-Caller"


class ApiError(Exception):
    """The jobs API answered 4xx/5xx; `message` is its ``error`` field."""

    def __init__(self, status: int, body: Any) -> None:
        """Keep the status and the API's own message."""
        message = body.get("error") if isinstance(body, dict) else None
        self.status: int = status
        self.body: Any = body
        self.message: str = str(message or body)
        super().__init__(f"HTTP {status}: {self.message}")


def local_state_file() -> Path:
    """Where `elsai jobs serve` records its URL (XDG cache dir)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "elsai" / "local-api.json"


def local_url() -> str:
    """The URL of the running `elsai jobs serve` (env override first)."""
    if os.environ.get(LOCAL_URL_ENV):
        return os.environ[LOCAL_URL_ENV]
    path = local_state_file()
    try:
        return str(json.loads(path.read_text())["url"])
    except (OSError, ValueError, KeyError) as exc:
        raise RuntimeError(
            f"no local jobs API is running (start one with `elsai jobs serve`; looked in {path})"
        ) from exc


def stack_api_url(stack_name: str, region: str | None) -> str:
    """The ``ApiUrl`` output of CloudFormation stack `stack_name`."""
    import boto3

    stacks = boto3.client("cloudformation", region_name=region).describe_stacks(
        StackName=stack_name
    )["Stacks"]
    for output in stacks[0].get("Outputs", []) if stacks else []:
        if output.get("OutputKey") == "ApiUrl" or output.get("ExportName", "").endswith("ApiUrl"):
            return str(output["OutputValue"])
    raise RuntimeError(f"stack {stack_name!r} has no ApiUrl output")


@dataclass
class JobsClient:
    """Calls the jobs API at `base_url`; signs with SigV4 unless `sign` is False."""

    base_url: str
    sign: bool = True
    region: str | None = None
    timeout: float = 30.0
    #: The local caller to act as (the local server's caller header); None: the default one.
    caller: str | None = None

    def _signed_headers(
        self, method: str, url: str, data: bytes | None, headers: dict[str, str]
    ) -> dict[str, str]:
        import botocore.session
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        session = botocore.session.get_session()
        credentials = session.get_credentials()
        if credentials is None:
            raise RuntimeError(
                "no AWS credentials found to sign the request (AWS_PROFILE, env, SSO, role)"
            )
        found = _REGION_IN_URL.search(url)
        region = (
            self.region
            or (found.group(1) if found else None)
            or session.get_config_variable("region")
        )
        request = AWSRequest(method=method, url=url, data=data, headers=headers)
        SigV4Auth(credentials, "execute-api", region or "us-east-1").add_auth(request)
        return dict(request.headers.items())

    def request(self, method: str, path: str, body: Any = None, *, query: dict[str, Any] | None = None,
                headers: dict[str, str] | None = None) -> Any:  # fmt: skip
        """One call; the parsed JSON body, or ApiError for a 4xx/5xx."""
        url = self.base_url.rstrip("/") + path
        clean = {k: str(v) for k, v in (query or {}).items() if v is not None}
        if clean:
            url += "?" + urlencode(clean)
        data = None if body is None else json.dumps(body).encode()
        sent = {"Content-Type": "application/json", **(headers or {})}
        if self.caller is not None:
            sent[CALLER_HEADER] = self.caller
        if self.sign:
            sent = self._signed_headers(method, url, data, sent)
        req = urllib.request.Request(url, data=data, method=method, headers=sent)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as response:
                return _parse(response.read())
        except urllib.error.HTTPError as exc:
            raise ApiError(exc.code, _parse(exc.read())) from None

    def start(
        self,
        prompt: str,
        session_id: str | None,
        idempotency_key: str | None,
        agent_id: str = "agent",
    ) -> dict[str, Any]:
        """POST /jobs."""
        body: dict[str, Any] = {"prompt": prompt, "agent_id": agent_id}
        if session_id:
            body["session_id"] = session_id
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
        return dict(self.request("POST", "/jobs", body, headers=headers))

    def status(self, job_id: str) -> dict[str, Any]:
        """GET /jobs/{id}."""
        return dict(self.request("GET", f"/jobs/{quote(job_id, safe='')}"))

    def events(self, job_id: str, after: str | None, limit: int = 100) -> dict[str, Any]:
        """GET /jobs/{id}/events."""
        return dict(
            self.request(
                "GET",
                f"/jobs/{quote(job_id, safe='')}/events",
                query={"after": after, "limit": limit},
            )
        )

    def answer(self, job_id: str, responses: list[dict[str, Any]]) -> dict[str, Any]:
        """POST /jobs/{id}/responses."""
        return dict(
            self.request(
                "POST", f"/jobs/{quote(job_id, safe='')}/responses", {"responses": responses}
            )
        )

    def cancel(self, job_id: str) -> dict[str, Any]:
        """DELETE /jobs/{id}."""
        return dict(self.request("DELETE", f"/jobs/{quote(job_id, safe='')}"))

    def upgrade(self, job_id: str) -> dict[str, Any]:
        """POST /jobs/{id}/upgrade."""
        return dict(self.request("POST", f"/jobs/{quote(job_id, safe='')}/upgrade"))

    def list(self, limit: int, after: str | None, status: str | None) -> dict[str, Any]:
        """GET /jobs."""
        return dict(
            self.request("GET", "/jobs", query={"limit": limit, "after": after, "status": status})
        )


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw or b"null")
    except ValueError:
        return raw.decode("utf-8", "replace")
