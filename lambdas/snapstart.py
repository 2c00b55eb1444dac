"""One-time work of the agent handler: when it runs, and what SnapStart restores must redo.

An on-demand cold start pays only the imports (``import agent_handler``); the botocore check,
the user's factory module and the S3 client wait for the first invocation, which needs them
anyway. A pre-initialized environment (SnapStart, ``AWS_LAMBDA_INITIALIZATION_TYPE=snap-start``,
or provisioned concurrency) is the opposite case: its init phase runs before any request, so
``warm_up`` does all of that work there and the snapshot keeps it. What must not survive a
restore is re-made by the after-restore hook: boto3 clients (their connections and the
credentials resolved at snapshot time are stale, and one snapshot seeds many environments) and
the ``random`` state (retry jitter must differ between restored copies).
"""

from __future__ import annotations

import functools
import os
import random

#: AWS_LAMBDA_INITIALIZATION_TYPE values whose init phase runs ahead of any request.
PRE_INITIALIZED = frozenset({"snap-start", "provisioned-concurrency"})


def initialization_type() -> str:
    """How Lambda started this environment (``on-demand`` when not on Lambda)."""
    return os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE", "on-demand")


def pre_initialized() -> bool:
    """True when the init phase is not on a request's path, so it should do all it can."""
    return initialization_type() in PRE_INITIALIZED


@functools.cache
def check_runtime() -> str:
    """Fail before any work if the loaded botocore cannot make S3 conditional writes (once)."""
    from elsai.serverless.runtime_check import require_s3_conditional_writes

    return require_s3_conditional_writes()


def _s3_client(bucket: str) -> None:
    """Build the process-wide S3 client the session store will use (no request is made)."""
    from elsai.session import S3SessionManager

    S3SessionManager(session_id="snapstart-warm-up", bucket=bucket)


def after_restore(bucket: str) -> None:
    """Forget clients and random state captured in the snapshot, then build fresh clients."""
    from elsai import aws_clients

    aws_clients.clear()
    random.seed()
    _s3_client(bucket)


def register_restore_hook(bucket: str) -> bool:
    """Register ``after_restore`` with the runtime's snapshot_restore_py (absent off Lambda)."""
    try:
        from snapshot_restore_py import register_after_restore
    except ImportError:
        return False
    register_after_restore(after_restore, bucket)
    return True


def warm_up(factory_path: str, bucket: str) -> None:
    """All one-time work of the first invocation, done in the init phase."""
    from elsai.serverless import load_factory

    check_runtime()
    load_factory(factory_path)  # imports the user's module and, through it, the agent stack
    _s3_client(bucket)
    if initialization_type() == "snap-start":
        register_restore_hook(bucket)
