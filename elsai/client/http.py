"""The jobs API over HTTP: SigV4-signed for API Gateway, plain for the local `elsai jobs serve`.

`http_client(url)` is `JobsApi` (the one client shape, `elsai.serverless.contract.jobs_api`)
on an `HttpTransport`. Signing uses botocore's own signer and the usual credential chain (env,
profile, SSO, role), so whatever works for the AWS CLI works here.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlencode

from elsai.serverless.contract.http import Reply, Request
from elsai.serverless.contract.jobs_api import JobsApi

_REGION_IN_URL = re.compile(r"\.execute-api\.([a-z0-9-]+)\.amazonaws\.com")
#: The header a local jobs API (`elsai jobs serve`) reads the acting caller from.
CALLER_HEADER = "X-Elsai-Local-Caller"


@dataclass
class HttpTransport:
    """Sends requests to the API at `base_url`; signs them with SigV4 unless `sign` is False."""

    base_url: str
    sign: bool = True
    region: str | None = None
    timeout: float = 30.0
    #: The local caller to act as (the local server's caller header); None: the default one.
    caller: str | None = None

    def send(self, request: Request) -> Reply:
        """One round trip; any status comes back as a Reply, only a network failure raises."""
        url = self.base_url.rstrip("/") + request.path
        if request.query:
            url += "?" + urlencode(request.query)
        headers = {"Content-Type": "application/json", **request.headers}
        if self.caller is not None:
            headers[CALLER_HEADER] = self.caller
        if self.sign:
            headers = self._signed_headers(request.method, url, request.body, headers)
        sent = urllib.request.Request(
            url, data=request.body, method=request.method, headers=headers
        )
        try:
            with urllib.request.urlopen(sent, timeout=self.timeout) as response:
                return Reply(response.status, dict(response.headers.items()), response.read())
        except urllib.error.HTTPError as exc:
            return Reply(exc.code, dict(exc.headers.items()), exc.read())

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


def http_client(
    base_url: str, *, sign: bool = True, region: str | None = None, timeout: float = 30.0,
    caller: str | None = None,
) -> JobsApi:  # fmt: skip
    """The jobs API at `base_url` (a stack's ``ApiUrl``, or a local server's URL with `sign=False`)."""
    return JobsApi(
        HttpTransport(base_url, sign=sign, region=region, timeout=timeout, caller=caller)
    )
