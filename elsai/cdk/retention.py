"""The opt-in retention sweeper: a daily Lambda that deletes sessions idle for N days.

Deployed only when ``sessionRetentionDays`` is set. Its role may list the sessions bucket
and delete current objects under ``session_*`` and ``owners/*/session_*`` (each owner's
sessions, with tenant isolation); it has no ``s3:DeleteObjectVersion``, so the
noncurrent versions (the undo window of versioning) are left to the bucket's lifecycle rule.
To keep the session of a live job (running, or waiting for a person) it may list the jobs
state machine's executions and describe them: read-only, on that one machine.

It also removes agent function versions no live job uses (``elsai.serverless.version_cleanup``):
``lambda:ListVersionsByFunction`` on the agent function, ``lambda:DeleteFunction`` on its
qualified ARNs only (``<arn>:*``: a version, never the function), and ``s3:GetObject`` on the
jobs' version records.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from elsai.cdk.config import ElsaiConfig
from elsai.cdk.function import PythonFunction
from elsai.serverless.contract import CURRENT_VERSION_ENV, handler_name

SWEEP_ACTIONS = ("s3:DeleteObject",)
#: Where sessions live: the bucket root (no isolation) and each owner's prefix.
SWEEP_PATTERNS = ("session_*", "owners/*/session_*")
#: Which jobs are live: ListExecutions on the machine, DescribeExecution (its input) on executions.
LIVE_JOB_ACTIONS = ("states:ListExecutions", "states:DescribeExecution")
#: Version cleanup: list the agent function's versions, delete a qualified ARN (one version).
VERSION_ACTIONS = ("lambda:ListVersionsByFunction", "lambda:DeleteFunction")
#: The jobs' version records, at the root and under each owner's prefix.
VERSION_RECORD_PATTERNS = ("jobs/*/version.json", "owners/*/jobs/*/version.json")


class RetentionSweeper(Construct):
    """Sweeper function + its daily schedule."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        code: lambda_.Code,
        bucket: s3.IBucket,
        state_machine: sfn.IStateMachine,
        execution_arns: str,
        idle_days: int,
        config: ElsaiConfig,
        agent_function: lambda_.IFunction,
        current_version: lambda_.IVersion,
    ) -> None:
        super().__init__(scope, construct_id)
        self._fn = PythonFunction(
            self,
            "Function",
            code=code,
            handler=handler_name("sweeper"),
            description=f"elsai retention: deletes sessions idle for {idle_days} days, whole",
            timeout_seconds=900,
            memory_mb=256,
            log_retention_days=config.log_retention_days,
            environment={
                "ELSAI_SESSIONS_BUCKET": bucket.bucket_name,
                "ELSAI_SESSION_IDLE_DAYS": str(idle_days),
                "ELSAI_STATE_MACHINE_ARN": state_machine.state_machine_arn,
                "ELSAI_AGENT_FUNCTION_NAME": agent_function.function_name,
                CURRENT_VERSION_ENV: current_version.function_arn,
                "POWERTOOLS_SERVICE_NAME": "elsai",
                "POWERTOOLS_METRICS_NAMESPACE": "elsai",
                "LOG_LEVEL": config.log_level,
            },
        )
        self.function = self._fn.function
        self.role = self._fn.role
        iam.Grant.add_to_principal(
            grantee=self.function,
            actions=["s3:ListBucket"],
            resource_arns=[bucket.bucket_arn],
        )
        iam.Grant.add_to_principal(
            grantee=self.function,
            actions=list(SWEEP_ACTIONS),
            resource_arns=[bucket.arn_for_objects(p) for p in SWEEP_PATTERNS],
        )
        iam.Grant.add_to_principal(
            grantee=self.function,
            actions=[LIVE_JOB_ACTIONS[0]],
            resource_arns=[state_machine.state_machine_arn],
        )
        iam.Grant.add_to_principal(
            grantee=self.function,
            actions=[LIVE_JOB_ACTIONS[1]],
            resource_arns=[execution_arns],
        )
        self._grant_version_cleanup(bucket, agent_function)
        self.schedule = events.Rule(
            self,
            "Daily",
            description="Run the elsai session retention sweeper once a day",
            schedule=events.Schedule.rate(cdk.Duration.days(1)),
            targets=[targets.LambdaFunction(self.function, retry_attempts=2)],
        )

    def _grant_version_cleanup(self, bucket: s3.IBucket, function: lambda_.IFunction) -> None:
        iam.Grant.add_to_principal(
            grantee=self.function,
            actions=[VERSION_ACTIONS[0]],
            resource_arns=[function.function_arn],
        )
        iam.Grant.add_to_principal(
            grantee=self.function,
            actions=[VERSION_ACTIONS[1]],
            resource_arns=[f"{function.function_arn}:*"],
        )
        iam.Grant.add_to_principal(
            grantee=self.function,
            actions=["s3:GetObject"],
            resource_arns=[bucket.arn_for_objects(p) for p in VERSION_RECORD_PATTERNS],
        )
