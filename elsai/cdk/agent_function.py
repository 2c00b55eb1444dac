"""The slice runner: one invocation = one bounded piece of an agent run.

It rebuilds the Agent from the sessions bucket with stable ids, so Step Functions can
retry it after a timeout or crash and the retry resumes from ``checkpoint.json``.
Permissions: read and put (never delete) under the session and job prefixes of the sessions
bucket, invoke the one configured Bedrock model.
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from constructs import Construct

from elsai.cdk.config import ElsaiConfig
from elsai.cdk.function import PythonFunction
from elsai.cdk.snapstart import snap_start_alias
from elsai.serverless.contract import handler_name

# Prefixes of Bedrock cross-region (system-defined) inference profile ids.
_GEO_PREFIXES = ("us", "eu", "apac", "global", "us-gov", "jp", "au", "ca")

BEDROCK_INVOKE_ACTIONS = ("bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream")
# What the agent writes: session files (session_<id>/...) and parked task tokens (jobs/...).
AGENT_PREFIXES = ("session_*", "jobs/*")


def bedrock_resource_arns(model_id: str, stack: cdk.Stack) -> list[str]:
    """ARNs that ``bedrock:InvokeModel*`` needs for ``model_id``, and no others.

    A cross-region inference profile (``us.anthropic...``) needs the profile ARN in
    this account/region plus the foundation model in every region the profile may
    route to (hence region ``*``). A plain model id needs only its foundation-model ARN.
    A full ARN is used verbatim.
    """
    if model_id.startswith("arn:"):
        return [model_id]
    prefix, _, rest = model_id.partition(".")
    if prefix in _GEO_PREFIXES and rest:
        profile = stack.format_arn(
            service="bedrock", resource="inference-profile", resource_name=model_id
        )
        model = f"arn:{cdk.Aws.PARTITION}:bedrock:*::foundation-model/{rest}"
        return [profile, model]
    return [f"arn:{cdk.Aws.PARTITION}:bedrock:{cdk.Aws.REGION}::foundation-model/{model_id}"]


class AgentFunction(Construct):
    """The agent Lambda (``agent_handler.handler``), also used for the task-token park step."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        code: lambda_.Code,
        bucket: s3.IBucket,
        config: ElsaiConfig,
    ) -> None:
        super().__init__(scope, construct_id)
        self._fn = PythonFunction(
            self,
            "Function",
            code=code,
            handler=handler_name("agent"),
            description="elsai agent slice runner (resumes from checkpoint.json on retry)",
            timeout_seconds=config.function_timeout_seconds,
            memory_mb=config.function_memory_mb,
            log_retention_days=config.log_retention_days,
            environment={
                "ELSAI_SESSIONS_BUCKET": bucket.bucket_name,
                "ELSAI_AGENT_FACTORY": config.agent_factory,
                "ELSAI_MODEL_ID": config.model_id,
                # The example agent plays a scripted LLM offline; deployed, it calls Bedrock.
                "ELSAI_MODEL": "bedrock",
                "POWERTOOLS_SERVICE_NAME": "elsai",
                "POWERTOOLS_METRICS_NAMESPACE": "elsai",
                "LOG_LEVEL": config.log_level,
                **config.agent_deadline_env,  # stop margin + default tool timeout
            },
            # A cap on parallel slices (all jobs together); extra invocations are throttled
            # and RunSlice's own Lambda.TooManyRequestsException retry waits for a free slot.
            reserved_concurrency=config.max_concurrent_slices,
            snap_start=config.snap_start,
        )
        self.function = self._fn.function
        self.role = self._fn.role
        #: This deploy's published version (a new one whenever code or configuration changes;
        #: old ones are retained): what a job started now is pinned to (elsai/cdk/pinning.py).
        self.version: lambda_.Version = self.function.current_version
        self.version.apply_removal_policy(cdk.RemovalPolicy.RETAIN)  # never deleted on update
        if config.snap_start:  # the same version, behind the stable "live" alias
            self.live_alias: lambda_.Alias = snap_start_alias(self, self.function)
        # Read + put only: nothing in a slice deletes, and s3:DeleteObjectVersion would
        # let a bug undo the bucket's versioning safeguard. With tenant isolation the slice
        # reaches S3 only through the per-job tenant role (elsai/cdk/tenancy.py).
        for prefix in () if config.tenant_isolation else AGENT_PREFIXES:
            bucket.grant_read(self.function, prefix)
            bucket.grant_put(self.function, prefix)
        self.model_arns: list[str] = bedrock_resource_arns(config.model_id, cdk.Stack.of(self))
        iam.Grant.add_to_principal(
            grantee=self.function,
            actions=list(BEDROCK_INVOKE_ACTIONS),
            resource_arns=self.model_arns,
        )
