"""DurableAgentService: sessions bucket + agent function + state machine + jobs API (+ sweeper).

One construct a user puts in their own CDK app (``from elsai.cdk import DurableAgentService``)
and this repository's ``infra/app.py`` puts in its stack: one implementation of the runtime.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from elsai.cdk.agent_function import BEDROCK_INVOKE_ACTIONS, AgentFunction
from elsai.cdk.api import JobsRestApi
from elsai.cdk.bundling import lambda_code
from elsai.cdk.config import ElsaiConfig
from elsai.cdk.factory_check import check_agent_factory
from elsai.cdk.lock import LOCK_FILE
from elsai.cdk.nag import acknowledge_findings
from elsai.cdk.props import add_outputs, code_paths, resolve_config, state_machine_name
from elsai.cdk.retention import RetentionSweeper
from elsai.cdk.state_machine import AgentStateMachine
from elsai.cdk.storage import SessionsBucket
from elsai.cdk.tenancy import ISOLATION_OFF_MESSAGE, ISOLATION_OFF_WARNING, TenantRole
from elsai.serverless.contract import SERVICE_METADATA


class DurableAgentService(Construct):
    """The whole serverless runtime for one agent factory; each concern is one construct.

    code: the user's agent package directory (or ``.py`` module), or several; each is bundled
        at the Lambda root under its own name, next to the handlers and elsai, so
        ``factory="my_agents.main:build"`` imports from ``code=Path("my_agents")``.
    factory / model_id: shortcuts for ``config.agent_factory`` / ``config.model_id``.
    config: every other knob (typed); default: the app's context values (cdk.json, ``-c``).
    check_factory: import and call the factory at synth time (default: on, unless the context
        says ``checkAgentFactory=false``); off when the factory needs packages synth lacks.
    botocore_services: botocore models kept in the bundle (default: pyproject's or elsai's list).
    lock: a hashed requirements lock for the Lambda platform holding elsai's requirements
        (``python -m elsai.cdk.lock requirements``) plus the packages your agent needs;
        default: elsai's own lock.
    output_prefix: prefix of the CfnOutput ids (``ApiUrl`` ...); give one per extra service
        in the same stack (``elsai jobs --stack-name`` reads ``ApiUrl``).

    The accepted cdk-nag findings are acknowledged here, so an app running the AwsSolutions
    pack synthesizes clean. Attributes: ``api_url``, ``bucket``, ``state_machine``,
    ``agent_function``, ``api_function``, ``sweeper_function`` (None without a retention), and
    the parts (``storage``, ``agent``, ``jobs``, ``api``, ``sweeper``); CfnOutputs of the same.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        code: Path | Sequence[Path] | None = None,
        factory: str | None = None,
        model_id: str | None = None,
        config: ElsaiConfig | None = None,
        check_factory: bool | None = None,
        botocore_services: Sequence[str] | None = None,
        lock: Path | None = None,
        output_prefix: str = "",
    ) -> None:
        super().__init__(scope, construct_id)
        self.config: ElsaiConfig = resolve_config(self, config, factory, model_id)
        self.code: tuple[Path, ...] = code_paths(code)
        asset = self._asset(check_factory, botocore_services, lock)
        stack = cdk.Stack.of(self)

        self.storage: SessionsBucket = SessionsBucket(
            self,
            "Sessions",
            # A parked token is useless once the interrupt wait is over; a day of slack.
            token_retention_days=-(-self.config.interrupt_wait_seconds // 86_400) + 1,
            noncurrent_version_days=self.config.noncurrent_version_days,
            access_log_retention_days=self.config.access_log_retention_days,
        )
        self.agent: AgentFunction = AgentFunction(
            self, "Agent", code=asset, bucket=self.storage.bucket, config=self.config
        )
        # A fixed name lets IAM name the executions (execution:<name>:*) without tokens.
        name = state_machine_name(stack, construct_id)
        self.jobs: AgentStateMachine = AgentStateMachine(
            self,
            "Jobs",
            agent_function=self.agent.function,
            current_version=self.agent.version,
            config=self.config,
            state_machine_name=name,
        )
        self.api: JobsRestApi = JobsRestApi(
            self,
            "Api",
            code=asset,
            bucket=self.storage.bucket,
            state_machine=self.jobs.state_machine,
            state_machine_name=name,
            config=self.config,
            current_version=self.agent.version,
        )
        self._add_optional_parts(asset)
        self.bucket: s3.Bucket = self.storage.bucket
        self.state_machine: sfn.StateMachine = self.jobs.state_machine
        self.api_url: str = self.api.api.url
        self.agent_function: lambda_.Function = self.agent.function
        self.api_function: lambda_.Function = self.api.function
        self.sweeper_function: lambda_.Function | None = (
            self.sweeper.function if self.sweeper else None
        )
        acknowledge_findings(self)
        add_outputs(self, output_prefix)
        # For the local runtime (elsai.local): which code the bundle gets. Assembly metadata,
        # not template content: a deploy sees nothing of it.
        # Its construct path and id let `--service` pick one of several.
        self.node.add_metadata(
            SERVICE_METADATA,
            {"code": [str(p) for p in self.code], "id": construct_id, "path": self.node.path},
        )

    def _asset(
        self,
        check_factory: bool | None,
        botocore_services: Sequence[str] | None,
        lock: Path | None,
    ) -> lambda_.Code:
        """The one Lambda asset every function shares, after checking the factory at synth."""
        if check_factory is None:
            check_factory = str(self.node.try_get_context("checkAgentFactory")).lower() != "false"
        if check_factory:  # fail synth, not every slice
            dirs = tuple(dict.fromkeys(p.parent for p in self.code))
            check_agent_factory(self.config.agent_factory, dirs)
        factory_module = [self.config.agent_factory.partition(":")[0]] if self.code else []
        return lambda_code(
            self.code,
            botocore_services=botocore_services,
            modules=factory_module,
            lock=Path(lock).resolve() if lock else LOCK_FILE,
            factory=self.config.agent_factory,
        )

    def _add_optional_parts(self, asset: lambda_.Code) -> None:
        """The per-job tenant role and the retention sweeper, when their knobs ask for them."""
        self.tenant: TenantRole | None = None
        if not self.config.tenant_isolation:
            cdk.Annotations.of(self).add_warning_v2(ISOLATION_OFF_WARNING, ISOLATION_OFF_MESSAGE)
        else:
            self.tenant = TenantRole(
                self,
                "Tenant",
                bucket=self.storage.bucket,
                agent_function=self.agent.function,
                model_arns=self.agent.model_arns,
                bedrock_actions=BEDROCK_INVOKE_ACTIONS,
            )
        self.sweeper: RetentionSweeper | None = None
        if self.config.session_retention_days is not None:
            self.sweeper = RetentionSweeper(
                self,
                "Retention",
                code=asset,
                bucket=self.storage.bucket,
                state_machine=self.jobs.state_machine,
                execution_arns=self.api.execution_arns,
                idle_days=self.config.session_retention_days,
                config=self.config,
                agent_function=self.agent.function,
                current_version=self.agent.version,
            )
