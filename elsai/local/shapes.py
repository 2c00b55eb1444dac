"""Lambda-side shapes shared by the runtime and its children: a context and API Gateway events.

Kept free of heavy imports: the child imports this before the handler, inside the timed
"init phase", and the CLI imports it before moto.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from typing import Any

ACCOUNT = "123456789012"
REGION = "us-east-1"
# Marked lines on a child's stdout/stderr (Powertools logs share stdout).
RESULT_MARK = "@@elsai-local-result "
ERROR_MARK = "@@elsai-local-error "
EVENT_MARK = "@@elsai-local-event "
#: The local caller when none is named: every local request is someone's, as behind IAM auth.
DEFAULT_CALLER = "local"
_CALLER_RE = re.compile(r"^[A-Za-z0-9+=,.@_-]{1,64}$")  # an IAM user name


def caller_arn(caller: str) -> str:
    """The IAM user ARN a local caller signs as; ValueError for a name IAM would refuse."""
    if not isinstance(caller, str) or not _CALLER_RE.match(caller):
        raise ValueError(
            f"caller {str(caller)[:80]!r} is not a valid name: 1-64 letters, digits or +=,.@_-"
        )
    return f"arn:aws:iam::{ACCOUNT}:user/{caller}"


class LocalLambdaContext:
    """The LambdaContext attributes Powertools reads, with a deadline that really counts down.

    The countdown starts when the object is made (the handler call), like Lambda's: the
    init phase (imports) is not part of the function timeout.
    """

    def __init__(
        self,
        function_name: str,
        timeout_ms: int,
        memory_mb: int = 1024,
        request_id: str | None = None,
    ) -> None:
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.invoked_function_arn: str = (
            f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{function_name}"
        )
        self.memory_limit_in_mb = memory_mb
        self.aws_request_id: str = request_id or str(uuid.uuid4())
        self.log_group_name: str = f"/aws/lambda/{function_name}"
        self.log_stream_name: str = f"local/{self.aws_request_id}"
        self._deadline = time.monotonic() + timeout_ms / 1000

    def get_remaining_time_in_millis(self) -> int:
        """What Lambda's context reports: the slice's deadline check reads it."""
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def rest_proxy_event(
    method: str,
    path: str,
    *,
    resource: str,
    path_parameters: dict[str, str] | None = None,
    body: Any = None,
    headers: dict[str, str] | None = None,
    query: dict[str, str] | None = None,
    caller: str = DEFAULT_CALLER,
) -> dict[str, Any]:
    """An API Gateway REST (v1 proxy) event, the shape `APIGatewayRestResolver` expects.

    `caller` is the IAM user the request is signed by (``requestContext.identity.userArn``):
    with tenant isolation, each caller sees only its own jobs and sessions.
    """
    user_arn = caller_arn(caller)
    all_headers = {"Content-Type": "application/json", "Host": "localhost", **(headers or {})}
    request_id = str(uuid.uuid4())
    return {
        "resource": resource,
        "path": path,
        "httpMethod": method,
        "headers": all_headers,
        "multiValueHeaders": {k: [v] for k, v in all_headers.items()},
        "queryStringParameters": dict(query) if query else None,
        "multiValueQueryStringParameters": {k: [v] for k, v in query.items()} if query else None,
        "pathParameters": path_parameters,
        "stageVariables": None,
        "requestContext": {
            "accountId": ACCOUNT,
            "apiId": "local",
            "resourcePath": resource,
            "httpMethod": method,
            "path": f"/v1{path}",
            "stage": "v1",
            "requestId": request_id,
            "requestTimeEpoch": int(time.time() * 1000),
            "protocol": "HTTP/1.1",
            "identity": {
                "sourceIp": "127.0.0.1",
                "userArn": user_arn,
                "userAgent": "elsai-local",
            },
        },
        "body": None if body is None else (body if isinstance(body, str) else json.dumps(body)),
        "isBase64Encoded": False,
    }
