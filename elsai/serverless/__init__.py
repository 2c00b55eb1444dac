"""The durable serverless runtime's Lambda-side logic (no AWS Lambda dependencies here).

`run_slice` runs one Step Functions "slice" of an agent job: it rebuilds the agent from S3
with stable ids, invokes it exactly-once for the execution, and stops at a loop boundary
before the Lambda deadline. `lambdas/agent_handler.py` wraps it with Powertools.
"""

from elsai.serverless.factory import load_factory
from elsai.serverless.slice import SliceRequest, SliceResult, park_task_token, run_slice

__all__ = ["SliceRequest", "SliceResult", "load_factory", "park_task_token", "run_slice"]
