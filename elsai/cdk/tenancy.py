"""Tenant isolation in the stack (``tenantIsolation``, on by default): per-job role, API side.

- `TenantRole`: the role each slice assumes for its agent. Its own policy reaches only
  ``owners/*`` of the sessions bucket (read + put, never delete) and the configured model;
  the slice narrows it further with a session policy naming exactly its job's session and
  records (`elsai.serverless.scoped.session_policy`). Only the agent function may assume it.
- `isolate_api`: the jobs API identifies callers (``ELSAI_TENANCY=owner``), may name admins,
  and reads/writes under ``owners/*`` instead of the bucket root.
- `method_options`: IAM (SigV4) auth by default; a Cognito user pool authorizer when
  ``cognitoUserPoolArn`` is set (the owner is then the token's ``sub`` claim).
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from constructs import Construct

from elsai.cdk.config import ElsaiConfig
from elsai.serverless.contract import service_keys

#: Where owner-namespaced data lives.
OWNERS = f"{service_keys.OWNERS_PREFIX}*"
TENANT_ROLE_ENV = "ELSAI_TENANT_ROLE_ARN"  # elsai.serverless.scoped.TENANT_ROLE_ENV
#: The id and text of the synth warning a deployment without isolation gets.
ISOLATION_OFF_WARNING = "elsai:tenantIsolationOff"
ISOLATION_OFF_MESSAGE = (
    "tenantIsolation=false: every caller the API admits can read, poll, answer and cancel "
    "every other caller's jobs and sessions, and tools run with the agent function's own "
    "S3 access. Only for a single trusted caller (docs/security.md)."
)


class TenantRole(Construct):
    """The role a slice assumes (with a per-job session policy) to run the user's agent."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        bucket: s3.IBucket,
        agent_function: lambda_.Function,
        model_arns: list[str],
        bedrock_actions: tuple[str, ...],
    ) -> None:
        super().__init__(scope, construct_id)
        agent_role = agent_function.role
        assert agent_role is not None
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ArnPrincipal(agent_role.role_arn),
            description="elsai agent slice, narrowed per job by a session policy",
            max_session_duration=cdk.Duration.hours(1),  # role chaining allows no more
        )
        bucket.grant_read(self.role, OWNERS)
        bucket.grant_put(self.role, OWNERS)
        iam.Grant.add_to_principal(
            grantee=self.role, actions=list(bedrock_actions), resource_arns=model_arns
        )
        self.role.grant_assume_role(agent_role)
        agent_function.add_environment(TENANT_ROLE_ENV, self.role.role_arn)


def isolate_api(
    api_function: lambda_.Function,
    bucket: s3.IBucket,
    config: ElsaiConfig,
    reads: tuple[str, ...],
    puts: tuple[str, ...],
) -> tuple[str, ...]:
    """Turn on the API's ownership checks and give it the owner prefixes it reads and writes.

    `reads` and `puts` are the key patterns the jobs API's table names. The API reads every
    owner's prefix (it checks ownership itself) and the root's `reads`; it writes each of
    `puts` under an owner's prefix and at the root, for jobs started before the stack turned
    isolation on, which admins may still read and steer (jobs_api.owner). Returns the key
    patterns it may put.
    """
    api_function.add_environment("ELSAI_TENANCY", "owner")
    if config.admin_arns:
        api_function.add_environment("ELSAI_ADMIN_ARNS", ",".join(config.admin_arns))
    if config.cognito_user_pool_arn:
        api_function.add_environment("ELSAI_AUTH", "cognito")
        if config.admin_groups:
            api_function.add_environment("ELSAI_ADMIN_GROUPS", ",".join(config.admin_groups))
    bucket.grant_read(api_function, OWNERS)
    for prefix in reads:
        bucket.grant_read(api_function, prefix)
    writes = tuple(p for key in puts for p in (f"{OWNERS}/{key}", key))
    iam.Grant.add_to_principal(
        grantee=api_function,
        actions=["s3:PutObject"],
        resource_arns=[bucket.arn_for_objects(p) for p in writes],
    )
    return writes


def method_options(scope: Construct, config: ElsaiConfig) -> apigw.MethodOptions:
    """Every method's authorization: SigV4 (IAM), or Cognito user pool tokens if configured."""
    if not config.cognito_user_pool_arn:
        return apigw.MethodOptions(authorization_type=apigw.AuthorizationType.IAM)
    pool = cognito.UserPool.from_user_pool_arn(scope, "Users", config.cognito_user_pool_arn)
    authorizer = apigw.CognitoUserPoolsAuthorizer(scope, "Authorizer", cognito_user_pools=[pool])
    return apigw.MethodOptions(
        authorization_type=apigw.AuthorizationType.COGNITO, authorizer=authorizer
    )
