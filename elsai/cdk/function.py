"""A Python Lambda with its own role and log group, and no AWS-managed policies.

CDK's default role attaches ``AWSLambdaBasicExecutionRole`` (logs on ``*``); an explicit
role plus ``log_group.grant_write`` scopes logging to this function's log group and
keeps cdk-nag's IAM4 finding away without an acknowledgement.
"""

from __future__ import annotations

from collections.abc import Mapping

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

RUNTIME = lambda_.Runtime.PYTHON_3_12  # the bundle's wheels are built for cp312


class PythonFunction(Construct):
    """Function + role + log group; ``function`` is what the other constructs grant to."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        code: lambda_.Code,
        handler: str,
        description: str,
        timeout_seconds: int,
        memory_mb: int,
        environment: Mapping[str, str],
        log_retention_days: int,
        reserved_concurrency: int | None = None,
        snap_start: bool = False,
    ) -> None:
        super().__init__(scope, construct_id)
        self.log_group = logs.LogGroup(
            self,
            "Logs",
            retention=retention(log_retention_days),
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"Execution role: {description}",
        )
        self.log_group.grant_write(self.role)
        self.function = lambda_.Function(
            self,
            "Function",
            runtime=RUNTIME,
            architecture=lambda_.Architecture.X86_64,  # matches the manylinux x86_64 wheels
            handler=handler,
            code=code,
            description=description,
            timeout=cdk.Duration.seconds(timeout_seconds),
            memory_size=memory_mb,
            environment=dict(environment),
            tracing=lambda_.Tracing.ACTIVE,
            role=self.role,
            log_group=self.log_group,
            reserved_concurrent_executions=reserved_concurrency,
            snap_start=lambda_.SnapStartConf.ON_PUBLISHED_VERSIONS if snap_start else None,
        )


_RETENTION: tuple[tuple[int, logs.RetentionDays], ...] = (
    (1, logs.RetentionDays.ONE_DAY),
    (7, logs.RetentionDays.ONE_WEEK),
    (14, logs.RetentionDays.TWO_WEEKS),
    (30, logs.RetentionDays.ONE_MONTH),
    (90, logs.RetentionDays.THREE_MONTHS),
    (180, logs.RetentionDays.SIX_MONTHS),
    (365, logs.RetentionDays.ONE_YEAR),
    (731, logs.RetentionDays.TWO_YEARS),
    (1827, logs.RetentionDays.FIVE_YEARS),
    (3653, logs.RetentionDays.TEN_YEARS),
)


def retention(days: int) -> logs.RetentionDays:
    """Smallest CloudWatch retention that keeps logs at least ``days`` days."""
    for limit, member in _RETENTION:
        if days <= limit:
            return member
    return _RETENTION[-1][1]
