"""Run the synthesized serverless runtime on one machine: moto + real handlers in child processes.

`LocalRuntime` starts a moto server, creates the bucket, functions and the STANDARD state
machine from the CDK template, and runs every agent Lambda invocation as a child process of
the real `lambdas/agent_handler.handler`, so crashes and retries behave as they do on AWS.

Names are imported lazily: the agent children import `infra.local.instrument` and must not
pay for (or re-import) the runtime side.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Fault": "infra.local.faults",
    "InvocationInfo": "infra.local.faults",
    "always_fail": "infra.local.faults",
    "every_slice": "infra.local.faults",
    "kill_in_tool": "infra.local.faults",
    "kill_in_job_tool": "infra.local.faults",
    "LocalEvent": "infra.local.events",
    "LocalApiError": "infra.local.api",
    "LocalHttpApi": "infra.local.http",
    "LocalRuntime": "infra.local.runtime",
    "find_repo_root": "infra.local.runtime",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'infra.local' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
