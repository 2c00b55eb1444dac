"""Lambda SnapStart for the agent function: the published version and the alias to call.

SnapStart snapshots an initialized environment when a version is published and restores new
environments from it; ``$LATEST`` is never snapshotted, so whoever calls the function must call
a version or an alias. ``snap_start_alias`` publishes the function's current version (a new
one whenever its code or configuration changes) behind a stable ``live`` alias. The handler's
side (init-time warm-up, restore hooks) is lambdas/snapstart.py.
"""

from __future__ import annotations

from aws_cdk import aws_lambda as lambda_
from constructs import Construct

ALIAS_NAME = "live"


def snap_start_alias(scope: Construct, function: lambda_.Function) -> lambda_.Alias:
    """The ``live`` alias on ``function``'s current version (created on each change)."""
    return lambda_.Alias(
        scope,
        "Live",
        alias_name=ALIAS_NAME,
        version=function.current_version,
        description="What the state machine invokes: the SnapStart-published version",
    )
