"""The durable serverless runtime's Lambda-side logic (no AWS Lambda dependencies here).

`run_slice` runs one Step Functions "slice" of an agent job: it rebuilds the agent from S3
with stable ids, invokes it exactly-once for the execution, and stops at a loop boundary
before the Lambda deadline. `lambdas/agent_handler.py` wraps it with Powertools.
`elsai.serverless.contract` owns what the state machine and the handler exchange (the step
registry: each action, its request and result models and the function serving it; statuses,
error names; the storage keys of jobs and owners).
`park_task_token`/`read_parked_token` share one record model for a job waiting on input,
and `elsai.serverless.limits` holds the size and id limits the jobs API and its CDK
request models both enforce.
"""

import importlib
from typing import TYPE_CHECKING, Any

from elsai.serverless.contract import SliceRequest, SliceResult
from elsai.serverless.deadline import (
    DeadlinePolicy,
    DefaultToolTimeout,
    min_function_timeout_seconds,
    stop_margin_seconds,
)
from elsai.serverless.factory import load_factory
from elsai.serverless.slice import run_slice

if TYPE_CHECKING:
    from elsai.serverless.orchestration import node_config
    from elsai.serverless.parked import ParkedTaskToken, park_task_token, read_parked_token

#: Loaded on first use: what only Graph/Swarm jobs and jobs waiting on a person need stays off
#: a plain agent slice's import.
_ON_FIRST_USE = {
    "node_config": "elsai.serverless.orchestration",
    "ParkedTaskToken": "elsai.serverless.parked",
    "park_task_token": "elsai.serverless.parked",
    "read_parked_token": "elsai.serverless.parked",
}


def __getattr__(name: str) -> Any:
    """The names of `_ON_FIRST_USE`, imported from their module when first asked for."""
    module = _ON_FIRST_USE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "DeadlinePolicy",
    "DefaultToolTimeout",
    "ParkedTaskToken",
    "SliceRequest",
    "SliceResult",
    "load_factory",
    "min_function_timeout_seconds",
    "node_config",
    "park_task_token",
    "read_parked_token",
    "run_slice",
    "stop_margin_seconds",
]
