"""The jobs API's HTTP client (`elsai.client.http_client`) against the real handler on 127.0.0.1.

The client signs with botocore's SigV4 signer; the server records the headers it got, and
the test recomputes the signature from them with the known secret, as IAM would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import botocore.session
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

from elsai.client import ApiError, http_client
from elsai.local.api import JobsApiMixin
from elsai.local.http import LocalHttpApi
from tests.unit.handlers.jobs_api.helpers import REGION, Api


class _Bridge(JobsApiMixin):
    def __init__(self, module: Any) -> None:
        self._api = module


@pytest.fixture
def served(api: Api) -> Iterator[LocalHttpApi]:
    server = LocalHttpApi(_Bridge(api.module)).start()
    try:
        yield server
    finally:
        server.close()


def _verify(headers: dict[str, str], method: str, url: str, body: bytes | None) -> None:
    # The usual credential chain (moto's mock sets its own test keys in the environment).
    credentials = botocore.session.get_session().get_credentials()
    assert credentials is not None
    auth_header = headers["Authorization"]
    assert auth_header.startswith(f"AWS4-HMAC-SHA256 Credential={credentials.access_key}/")
    assert f"/{REGION}/execute-api/aws4_request" in auth_header
    signed = auth_header.split("SignedHeaders=")[1].split(",")[0].split(";")
    assert {"host", "x-amz-date", "x-amz-security-token"} <= set(signed)
    lower = {k.lower(): v for k, v in headers.items()}
    request = AWSRequest(method=method, url=url, data=body,
                         headers={k: lower[k] for k in signed if k != "host"})  # fmt: skip
    request.context["timestamp"] = lower["x-amz-date"]
    signer = SigV4Auth(credentials, "execute-api", REGION)
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    assert auth_header.endswith(f"Signature={expected}")


def test_signed_requests_reach_the_handler_and_verify(served: LocalHttpApi) -> None:
    client = http_client(served.url, region=REGION)
    job = client.start("hello", session_id="signed-session", idempotency_key="key-1")
    assert job.status == "RUNNING" and job.session_id == "signed-session"
    post = served.recorded_headers[-1]
    _verify(
        post,
        "POST",
        served.url + "/jobs",
        b'{"prompt": "hello", "session_id": "signed-session", "agent_id": "agent"}',
    )
    assert post["Idempotency-Key"] == "key-1"
    assert client.get(job.job_id).status == "RUNNING"
    _verify(served.recorded_headers[-1], "GET", f"{served.url}/jobs/{job.job_id}", None)
    page = client.events(job.job_id, limit=5)
    _verify(
        served.recorded_headers[-1],
        "GET",
        f"{served.url}/jobs/{job.job_id}/events?limit=5",
        None,
    )
    assert page.status == "RUNNING"
    assert client.cancel(job.job_id).status == "CANCELLED"
    assert [j.status for j in client.list(limit=10).jobs] == ["CANCELLED"]


def test_api_errors_come_back_as_api_error_with_the_message(served: LocalHttpApi) -> None:
    client = http_client(served.url, region=REGION)
    with pytest.raises(ApiError) as caught:
        client.get("no-such-job")
    assert caught.value.status == 404 and caught.value.message == "no job 'no-such-job'"
    with pytest.raises(ApiError) as caught:
        client.start("")
    assert caught.value.status == 400


def test_stack_name_reads_the_api_url_output(api: Api) -> None:
    import boto3

    from elsai.client import stack_api_url

    cfn = boto3.client("cloudformation", region_name=REGION)
    url = f"https://abc123.execute-api.{REGION}.amazonaws.com/v1/"
    template = {
        "Resources": {"Q": {"Type": "AWS::SQS::Queue"}},
        "Outputs": {"ApiUrl": {"Value": url}},
    }
    cfn.create_stack(StackName="ElsaiStack", TemplateBody=json.dumps(template))
    assert stack_api_url("ElsaiStack", REGION) == url
    cfn.create_stack(
        StackName="NoApi", TemplateBody=json.dumps({"Resources": template["Resources"]})
    )
    with pytest.raises(RuntimeError, match="has no ApiUrl output"):
        stack_api_url("NoApi", REGION)


def test_follow_on_a_tty_polls_until_cancelled_and_exits_3(served: LocalHttpApi) -> None:
    import io

    from elsai.cli.jobs.follow import Follower

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    client = http_client(served.url, region=REGION)
    job_id = client.start("hello").job_id
    naps: list[float] = []

    def nap(seconds: float) -> None:  # the job runs until someone cancels it: do that
        naps.append(seconds)
        if len(naps) == 2:
            client.cancel(job_id)

    out = Tty()
    assert Follower(client, job_id, out, as_json=False, sleep=nap).run() == 3
    assert len(naps) == 2
    # (moto without its engine keeps a canned history, so the lines shown are not asserted)
    assert not out.getvalue().endswith("\x1b[K")
