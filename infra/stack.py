"""ElsaiStack: sessions bucket + agent function + state machine + jobs API (+ opt-in sweeper)."""

from __future__ import annotations

import aws_cdk as cdk
from constructs import Construct

from infra.bundling import lambda_code
from infra.config import ElsaiConfig
from infra.constructs.agent_function import AgentFunction
from infra.constructs.api import JobsApi
from infra.constructs.retention import RetentionSweeper
from infra.constructs.state_machine import AgentStateMachine
from infra.constructs.storage import SessionsBucket
from infra.factory_check import check_agent_factory


class ElsaiStack(cdk.Stack):
    """The whole serverless runtime; each concern is one construct, wired here."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: ElsaiConfig | None = None,
        **kwargs: object,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)  # type: ignore[arg-type]
        self.config = config or ElsaiConfig.from_node(self.node)
        if str(self.node.try_get_context("checkAgentFactory")).lower() != "false":
            check_agent_factory(self.config.agent_factory)  # fail synth, not every slice
        code = lambda_code()  # one asset, shared by both functions

        self.storage = SessionsBucket(
            self,
            "Sessions",
            # A parked token is useless once the interrupt wait is over; a day of slack.
            token_retention_days=-(-self.config.interrupt_wait_seconds // 86_400) + 1,
            noncurrent_version_days=self.config.noncurrent_version_days,
            access_log_retention_days=self.config.access_log_retention_days,
        )
        self.agent = AgentFunction(
            self, "Agent", code=code, bucket=self.storage.bucket, config=self.config
        )
        # A fixed name lets IAM name the executions (execution:<name>:*) without tokens.
        name = f"{self.stack_name}-jobs"
        self.jobs = AgentStateMachine(
            self,
            "Jobs",
            agent_function=self.agent.invoke_target,
            config=self.config,
            state_machine_name=name,
        )
        self.api = JobsApi(
            self,
            "Api",
            code=code,
            bucket=self.storage.bucket,
            state_machine=self.jobs.state_machine,
            state_machine_name=name,
            config=self.config,
        )
        self.sweeper: RetentionSweeper | None = None
        if self.config.session_retention_days is not None:
            self.sweeper = RetentionSweeper(
                self,
                "Retention",
                code=code,
                bucket=self.storage.bucket,
                idle_days=self.config.session_retention_days,
                config=self.config,
            )

        cdk.CfnOutput(self, "SessionsBucketName", value=self.storage.bucket.bucket_name)
        cdk.CfnOutput(self, "StateMachineArn", value=self.jobs.state_machine.state_machine_arn)
        cdk.CfnOutput(self, "ApiUrl", value=self.api.api.url)
        cdk.CfnOutput(self, "AgentFunctionName", value=self.agent.function.function_name)
