"""Process-wide boto3 clients, shared by everything in elsai that talks to AWS.

Building a boto3 session and client costs ~100 ms (service models load from disk). Agents are
rebuilt often (every resume, every Lambda slice in a warm container) and clients are
thread-safe, so one client per (service, session, region, relevant environment) is reused.
boto3 is imported on first use, never by `import elsai`.
"""

from __future__ import annotations

import os
import threading
from typing import Any

#: Environment variables that change what a default client talks to or as whom.
_ENV_KEYS = (
    "AWS_ENDPOINT_URL",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID",
)

_clients: dict[tuple[Any, ...], Any] = {}
_lock = threading.Lock()


def shared_client(
    service: str,
    *,
    boto_session: Any = None,
    region_name: str | None = None,
    config: Any = None,
    config_key: str = "",
) -> Any:
    """The shared client for `service`; `config_key` names `config` (botocore Configs are not hashable)."""
    service_endpoint = f"AWS_ENDPOINT_URL_{service.upper().replace('-', '_')}"
    env = tuple(os.environ.get(v) for v in (service_endpoint, *_ENV_KEYS))
    # The session object itself (not its id, which may be reused after GC) is part of the key.
    key = (service, boto_session, region_name, config_key, env)
    with _lock:
        client = _clients.get(key)
        if client is None:
            import boto3

            session: Any = boto_session or boto3.Session()
            client = session.client(service, region_name=region_name, config=config)
            _clients[key] = client
        return client


def clear() -> None:
    """Forget every shared client (tests that change credentials mid-process, benchmarks)."""
    with _lock:
        _clients.clear()


def forget_access_key(access_key_id: str) -> None:
    """Drop the shared clients built while `access_key_id` was the ambient key.

    Per-job scoped credentials (elsai.serverless.scoped) would otherwise leave one client
    per job in a warm process.
    """
    with _lock:
        for key in [k for k in _clients if access_key_id in k[-1]]:
            del _clients[key]
