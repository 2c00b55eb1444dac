"""cdk-nag (3.x) wiring: AwsSolutions checks on the app, acknowledgements on the service.

Every acknowledgement names one exact finding (bracketed part included) on the construct
that causes it, with the reason it is acceptable. Anything new fails ``app.synth()``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import aws_cdk as cdk
from cdk_nag import AwsSolutionsChecks
from constructs import IConstruct

if TYPE_CHECKING:  # the service calls acknowledge_findings(self) as it is built
    from elsai.cdk.service import DurableAgentService as ElsaiStack


def enable_nag(app: cdk.App) -> None:
    """Run the AwsSolutions pack at synth; a finding without an acknowledgement raises."""
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))


def _ack(scope: IConstruct, finding: str, reason: str) -> None:
    # "AwsSolutions::" is the plugin prefix nag prints ("Acknowledge with ..."); without
    # it CDK would file the id under "Annotation::".
    cdk.Validations.of(scope).acknowledge(
        cdk.Acknowledgment(id=f"AwsSolutions::{finding}", reason=reason)
    )


def _arn_ref(_scope: object, construct: IConstruct) -> str:
    """cdk-nag's rendering of ``Fn::GetAtt [<logical id>, Arn]`` in finding ids."""
    stack = cdk.Stack.of(construct)
    cfn = construct.node.default_child
    assert isinstance(cfn, cdk.CfnElement)
    return f"<{stack.resolve(stack.get_logical_id(cfn))}.Arn>"


S3_PREFIX_GRANT = (
    "CDK grant_read/grant_put action groups (object get/put/abort, bucket list), limited to "
    "the sessions bucket's session_* and jobs/* prefixes; session files are addressed by "
    "computed keys, so object ARNs need a prefix wildcard. No delete action is granted."
)
XRAY = "X-Ray PutTraceSegments/PutTelemetryRecords do not support resource-level permissions."
RUNTIME = (
    "Python 3.12 is pinned on purpose: the bundle's compiled wheels (pydantic-core) are "
    "installed for cp312, and the runtime is supported; bump together with bundling.py."
)
AGENT_S3_ACTIONS = ("s3:GetObject*", "s3:GetBucket*", "s3:List*", "s3:Abort*")
API_S3_ACTIONS = ("s3:GetObject*", "s3:GetBucket*", "s3:List*")
PREFIXES = ("session_*", "jobs/*")


def acknowledge_findings(stack: ElsaiStack) -> None:
    """The accepted findings of a DurableAgentService (``stack``), each with its reason."""
    _functions(stack)
    _bedrock(stack)
    _api(stack)
    _state_machine(stack)
    _sweeper(stack)
    _tenancy(stack)
    _ack(
        stack.storage.access_logs,
        "AwsSolutions-S1",
        "This is the server-access-log target bucket; logging it would recurse.",
    )


def _functions(stack: ElsaiStack) -> None:
    """Prefix-scoped S3 grants, X-Ray and the pinned runtime of the agent and API functions."""
    bucket_arn = _arn_ref(stack, stack.storage.bucket)
    api_reads = stack.api.needs.reads  # the jobs API table's read grants
    for fn, actions, prefixes in (
        (stack.agent, AGENT_S3_ACTIONS, PREFIXES),
        (stack.api, API_S3_ACTIONS, api_reads),
    ):
        policy = fn.role.node.find_child("DefaultPolicy")
        for action in actions:
            _ack(policy, f"AwsSolutions-IAM5[Action::{action}]", S3_PREFIX_GRANT)
        for prefix in prefixes:
            _ack(policy, f"AwsSolutions-IAM5[Resource::{bucket_arn}/{prefix}]", S3_PREFIX_GRANT)
        _ack(fn.function, "AwsSolutions-L1", RUNTIME)
    agent_policy = stack.agent.role.node.find_child("DefaultPolicy")
    _ack(agent_policy, "AwsSolutions-IAM5[Resource::*]", XRAY)


def _bedrock(stack: ElsaiStack) -> None:
    agent_policy = stack.agent.role.node.find_child("DefaultPolicy")
    for arn in stack.agent.model_arns:
        if "*" in arn:
            _ack(
                agent_policy,
                f"AwsSolutions-IAM5[Resource::{_nag_arn(arn)}]",
                "A cross-region inference profile may route to the model in any region of "
                "its geography; the ARN still names exactly one foundation model.",
            )


def _api(stack: ElsaiStack) -> None:
    api_policy = stack.api.role.node.find_child("DefaultPolicy")
    bucket_arn = _arn_ref(stack, stack.storage.bucket)
    _ack(
        api_policy,
        "AwsSolutions-IAM5[Resource::*]",
        "states:SendTaskSuccess takes a task token, not a resource: IAM only accepts '*' "
        "for it. " + XRAY,
    )
    for pattern, routes in stack.api.needs.writers.items():  # from the jobs API's table
        _ack(
            api_policy,
            f"AwsSolutions-IAM5[Resource::{bucket_arn}/{pattern}]",
            f"{', '.join(routes)} write(s) these per-job records (s3:PutObject only); the job "
            "id (and token digest) is the wildcard.",
        )
    _ack(
        api_policy,
        f"AwsSolutions-IAM5[Resource::{_nag_arn(stack.api.execution_arns)}]",
        "Describe/GetExecutionHistory/StopExecution on executions of this one state machine; "
        "execution names are per job (and per continuation), so the pattern ends in '*'.",
    )
    rest_api = stack.api.api
    _ack(
        rest_api.deployment_stage,
        "AwsSolutions-APIG3",
        "No WAF: every method requires SigV4 (AWS_IAM) and the stage is throttled; a web ACL "
        "can be attached per deployment without changing this stack.",
    )
    for method in rest_api.methods if not stack.config.cognito_user_pool_arn else ():
        _ack(
            method,
            "AwsSolutions-COG4",
            "Callers are AWS principals authorised by IAM (SigV4), not Cognito end users.",
        )
    _ack(
        rest_api.node.find_child("CloudWatchRole"),
        "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/"
        "AmazonAPIGatewayPushToCloudWatchLogs]",
        "The AWS-managed policy is the documented one for API Gateway's account-level "
        "CloudWatch role, needed for stage execution logging.",
    )


def _state_machine(stack: ElsaiStack) -> None:
    sm_policy = stack.jobs.state_machine.role.node.find_child("DefaultPolicy")
    agent_arn = _arn_ref(stack, stack.agent.function)
    _ack(
        sm_policy,
        f"AwsSolutions-IAM5[Resource::{agent_arn}:*]",
        "CDK's LambdaInvoke grant also covers versions/aliases of the same agent function.",
    )
    _ack(
        sm_policy,
        "AwsSolutions-IAM5[Resource::*]",
        "CloudWatch Logs delivery (logs:CreateLogDelivery etc.) and X-Ray actions used by "
        "state machine logging/tracing do not support resource-level permissions.",
    )


def _sweeper(stack: ElsaiStack) -> None:
    if stack.sweeper is None:
        return
    policy = stack.sweeper.role.node.find_child("DefaultPolicy")
    bucket_arn = _arn_ref(stack, stack.storage.bucket)
    _ack(
        policy,
        f"AwsSolutions-IAM5[Resource::{bucket_arn}/session_*]",
        "The sweeper deletes whole idle sessions: s3:DeleteObject (no version deletes) on "
        "the session_* prefix, whose keys it only learns by listing.",
    )
    _ack(
        policy,
        f"AwsSolutions-IAM5[Resource::{bucket_arn}/owners/*/session_*]",
        "The same for each owner's sessions (tenant isolation): s3:DeleteObject on "
        "owners/<tag>/session_* only, never an owner's job records; owner tags are hashes.",
    )
    _ack(
        policy,
        f"AwsSolutions-IAM5[Resource::{_nag_arn(stack.api.execution_arns)}]",
        "DescribeExecution on executions of this one state machine (the input names a live "
        "job's session, which the sweeper keeps); execution names are per job, so '*'.",
    )
    agent_arn = _arn_ref(stack, stack.agent.function)
    _ack(
        policy,
        f"AwsSolutions-IAM5[Resource::{agent_arn}:*]",
        "Version cleanup: lambda:DeleteFunction on the agent function's qualified ARNs (one "
        "version each, never the function); which versions exist it only learns by listing.",
    )
    for pattern in ("jobs/*/version.json", "owners/*/jobs/*/version.json"):
        _ack(
            policy,
            f"AwsSolutions-IAM5[Resource::{bucket_arn}/{pattern}]",
            "Version cleanup reads the version records of live jobs (s3:GetObject only): a "
            "version a running job was upgraded to is kept; job ids are per job, so '*'.",
        )
    _ack(policy, "AwsSolutions-IAM5[Resource::*]", XRAY)
    _ack(stack.sweeper.function, "AwsSolutions-L1", RUNTIME)


OWNER_GRANT = (
    "Tenant isolation: CDK grant_read/grant_put action groups on the owners/* prefix only "
    "(every owner's data sits under owners/<tag>/); each slice narrows this role to its own "
    "job's session and records with an AssumeRole session policy. No delete is granted."
)


def _tenancy(stack: ElsaiStack) -> None:
    """The tenant role's owners/* grants and the API's owner-prefixed reads and writes."""
    if stack.tenant is None:
        return
    bucket_arn = _arn_ref(stack, stack.storage.bucket)
    policy = stack.tenant.role.node.find_child("DefaultPolicy")
    for action in AGENT_S3_ACTIONS:
        _ack(policy, f"AwsSolutions-IAM5[Action::{action}]", OWNER_GRANT)
    _ack(policy, f"AwsSolutions-IAM5[Resource::{bucket_arn}/owners/*]", OWNER_GRANT)
    for arn in stack.agent.model_arns:
        if "*" in arn:
            _ack(
                policy,
                f"AwsSolutions-IAM5[Resource::{_nag_arn(arn)}]",
                "The model call runs with the job's scoped credentials; a cross-region "
                "inference profile may route to any region of its geography (one model).",
            )
    api_policy = stack.api.role.node.find_child("DefaultPolicy")
    for pattern in ("owners/*", *stack.api.object_writes):
        _ack(
            api_policy,
            f"AwsSolutions-IAM5[Resource::{bucket_arn}/{pattern}]",
            "Tenant isolation: the API reads any owner's prefix (it checks ownership itself) "
            "and writes only cancel records, answer claims, version records and node answers; "
            "the owner tag is a wildcard.",
        )


def _nag_arn(arn: str) -> str:
    """Placeholder form cdk-nag uses for pseudo parameters in resource ARNs."""
    return (
        arn.replace(cdk.Aws.PARTITION, "<AWS::Partition>")
        .replace(cdk.Aws.REGION, "<AWS::Region>")
        .replace(cdk.Aws.ACCOUNT_ID, "<AWS::AccountId>")
    )
