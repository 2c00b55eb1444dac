"""Run the synthesized serverless runtime on one machine: moto + real handlers in child processes.

`LocalRuntime` synthesizes the CDK app of a project directory (its cdk.json) once, starts a
moto server, creates the bucket, functions and the STANDARD state machine of its
DurableAgentService, and runs every agent Lambda invocation as a child process of
the real `elsai_lambdas.agent_handler.handler`, so crashes and retries behave as they do on AWS.

Names are imported lazily: the agent children import `elsai.local.instrument` and must not
pay for (or re-import) the runtime side.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Fault": "elsai.local.faults",
    "InvocationInfo": "elsai.local.faults",
    "always_fail": "elsai.local.faults",
    "every_slice": "elsai.local.faults",
    "kill_in_tool": "elsai.local.faults",
    "kill_in_job_tool": "elsai.local.faults",
    "LocalEvent": "elsai.local.events",
    "LocalHttpApi": "elsai.local.http",
    "LocalRuntime": "elsai.local.runtime",
    "ProjectError": "elsai.local.services",
    "SynthesizedService": "elsai.local.services",
    "default_service": "elsai.local.template",
    "load_cdk_out": "elsai.local.template",
    "load_service": "elsai.local.template",
    "load_template": "elsai.local.template",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'elsai.local' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
