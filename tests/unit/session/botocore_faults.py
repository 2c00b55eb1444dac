"""Fault injection at botocore's `before-send` event, against the real moto server.

`LostResponses` sits where botocore is about to send a PutObject. For a chosen attempt it
either sends the request to the server itself (so S3 applies it) and then raises
`ReadTimeoutError`/`ConnectionClosedError` as if the response had been lost, or drops the
request before it leaves. botocore sees an ordinary network failure and retries, exactly as
it would in Lambda. `InFlight409` answers chosen attempts with S3's 409
`ConditionalRequestConflict` (after optionally applying them), which moto never sends.
Nothing of boto3 is replaced: the hooks go through botocore's public event system.
"""

from __future__ import annotations

import io
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.exceptions import ConnectionClosedError, ReadTimeoutError
from botocore.httpsession import URLLib3Session
from urllib3.response import HTTPResponse

PUT_EVENT = "before-send.s3.PutObject"


def put_kind(request: AWSPreparedRequest) -> str:
    """'create' (If-None-Match) or 'replace' (If-Match) for a conditional PutObject."""
    headers = {k.lower(): v for k, v in request.headers.items()}
    return "replace" if "if-match" in headers else "create"


@dataclass
class LostResponses:
    """Lose the responses of PutObject attempts at random, at most `max_in_a_row` per write.

    `max_in_a_row` stays below botocore's attempts (3 in standard mode), so every write gets
    one attempt through, and `budget` keeps a client's faults below botocore's retry quota
    (500 units, 14 a retry: about 35 retries before it stops retrying): what is tested is the
    answer to the retry, not retry exhaustion. `applied_share` of the faults send the request
    first (S3 applies it), the rest drop it before it leaves.
    """

    seed: int
    rate: float = 0.7
    applied_share: float = 0.85
    max_in_a_row: int = 2
    budget: int = 30
    counts: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._http = URLLib3Session()
        self._in_a_row: dict[tuple[str, str], int] = {}

    def __call__(self, request: AWSPreparedRequest, **_: Any) -> None:
        kind = put_kind(request)
        write = (request.url, kind)  # one write at a time per key in these tests
        in_a_row = self._in_a_row.get(write, 0)
        spent = (
            sum(self.counts.values()) - self.counts["create_passed"] - self.counts["replace_passed"]
        )
        if spent >= self.budget or in_a_row >= self.max_in_a_row or self._rng.random() >= self.rate:
            self._in_a_row.pop(write, None)
            self.counts[f"{kind}_passed"] += 1
            return None  # botocore sends it normally
        self._in_a_row[write] = in_a_row + 1
        if self._rng.random() < self.applied_share:
            response = self._http.send(request)  # S3 applies (or refuses) it for real
            self.counts[f"{kind}_applied_then_lost_{response.status_code}"] += 1
            raise ReadTimeoutError(endpoint_url=request.url)
        self.counts[f"{kind}_dropped_before_sending"] += 1
        raise ConnectionClosedError(endpoint_url=request.url)

    def applied_and_lost(self, kind: str) -> int:
        """Faults of `kind` where the server processed the request and the answer was lost."""
        prefix = f"{kind}_applied_then_lost_"
        return sum(n for name, n in self.counts.items() if name.startswith(prefix))


_CONFLICT_409 = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>ConditionalRequestConflict</Code>'
    b"<Message>A conflicting conditional operation is currently in progress against this "
    b"resource. Please try again.</Message></Error>"
)


@dataclass
class InFlight409:
    """Answer `times` PutObject attempts with 409. With `lost_first`, the first attempt is
    sent to the server and its response lost (botocore retries), so the write in flight that
    the 409s report is this writer's own."""

    times: int
    lost_first: bool = False
    answered: int = 0

    def __post_init__(self) -> None:
        self._http = URLLib3Session()
        self._lost = False

    def __call__(self, request: AWSPreparedRequest, **_: Any) -> AWSResponse | None:
        if self.lost_first and not self._lost:
            self._lost = True
            self._http.send(request)
            raise ReadTimeoutError(endpoint_url=request.url)
        if self.answered >= self.times:
            return None
        self.answered += 1
        raw = HTTPResponse(
            body=io.BytesIO(_CONFLICT_409),
            status=409,
            headers={"Content-Type": "application/xml"},
            preload_content=False,
        )
        return AWSResponse(request.url, 409, {"Content-Type": "application/xml"}, raw)
