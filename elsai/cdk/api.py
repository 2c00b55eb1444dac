"""The jobs API: REST API Gateway (IAM auth) in front of the api Lambda, made from its table.

A Standard state machine cannot sit behind ``StepFunctionsRestApi`` (Express only), and
the routes need logic (ids, task tokens in S3), so a Powertools resolver Lambda fronts
it. Every resource, method, request model and grant comes from the jobs API's table
(`elsai.serverless.contract.jobs_api.JobsApi`): a method per row, its path parameters
declared, its body checked against the row's request model (`gateway_models`: never
stricter than the handler), and the API's role given exactly the union of the rows' grants
(start/list/describe/stop/answer this one machine's executions, read the sessions bucket's
prefixes, put the few records the routes write).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import aws_cdk as cdk
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from elsai.cdk.config import ElsaiConfig
from elsai.cdk.function import PythonFunction, retention
from elsai.cdk.gateway_models import gateway_schema, to_cdk
from elsai.cdk.tenancy import isolate_api, method_options
from elsai.serverless.contract import CURRENT_VERSION_ENV, handler_name
from elsai.serverless.contract.http import READ_ACTIONS, Operation
from elsai.serverless.contract.jobs_api import JobsApi

_PUT = ("s3:PutObject",)


@dataclass(frozen=True)
class RoleNeeds:
    """The union of a table's grants: what the API's role is given, and who needs it."""

    #: Grant target ("state_machine", "executions", "task_tokens") -> its actions.
    actions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    reads: tuple[str, ...] = ()  # object key patterns read
    puts: tuple[str, ...] = ()  # object key patterns written
    #: Object key pattern written -> the routes writing it (``POST /jobs``), for the nag notes.
    writers: dict[str, tuple[str, ...]] = field(default_factory=dict)


def role_needs(operations: Sequence[Operation]) -> RoleNeeds:
    """The grants of every row, merged per target, in the order the table names them."""
    actions: dict[str, list[str]] = {}
    reads: list[str] = []
    writers: dict[str, list[str]] = {}
    for op in operations:
        for grant in op.grants:
            if grant.on != "objects":
                listed = actions.setdefault(grant.on, [])
                listed += [a for a in grant.actions if a not in listed]
            elif grant.actions == READ_ACTIONS:
                reads += [k for k in grant.keys if k not in reads]
            elif grant.actions == _PUT:
                for key in grant.keys:
                    writers.setdefault(key, []).append(f"{op.method} {op.path}")
            else:
                raise ValueError(f"{op.id}: no CDK grant for {grant.actions} on objects")
    return RoleNeeds(
        actions={k: tuple(v) for k, v in actions.items()}, reads=tuple(reads),
        puts=tuple(writers), writers={k: tuple(v) for k, v in writers.items()},
    )  # fmt: skip


def execution_arn_pattern(stack: cdk.Stack, state_machine_name: str) -> str:
    """``arn:...:execution:<machine>:*``: every execution of this machine, nothing else."""
    return stack.format_arn(
        service="states",
        resource="execution",
        resource_name=f"{state_machine_name}:*",
        arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
    )


class JobsRestApi(Construct):
    """API Lambda + REST API with IAM auth, request validation, access logs, throttling."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        code: lambda_.Code,
        bucket: s3.IBucket,
        state_machine: sfn.IStateMachine,
        state_machine_name: str,
        config: ElsaiConfig,
        current_version: lambda_.IVersion,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = cdk.Stack.of(self)
        self._fn = PythonFunction(
            self,
            "Function",
            code=code,
            handler=handler_name("api"),
            description="elsai jobs API (start, describe, answer interrupts, read sessions)",
            timeout_seconds=29,  # API Gateway's integration timeout
            memory_mb=512,
            log_retention_days=config.log_retention_days,
            environment={
                "ELSAI_STATE_MACHINE_ARN": state_machine.state_machine_arn,
                "ELSAI_SESSIONS_BUCKET": bucket.bucket_name,
                # The version a job started now is pinned to (elsai/cdk/pinning.py).
                CURRENT_VERSION_ENV: current_version.function_arn,
                "POWERTOOLS_SERVICE_NAME": "elsai",
                "POWERTOOLS_METRICS_NAMESPACE": "elsai",
                "LOG_LEVEL": config.log_level,
            },
        )
        self.function = self._fn.function
        self.role = self._fn.role
        self.execution_arns: str = execution_arn_pattern(stack, state_machine_name)
        self.operations: tuple[Operation, ...] = JobsApi.operations()
        self.needs: RoleNeeds = role_needs(self.operations)
        #: Object key patterns the role may put (under owners/*/ too, with tenant isolation).
        self.object_writes: tuple[str, ...] = self._grant(bucket, state_machine, config)
        self.api: apigw.RestApi = self._rest_api(config)
        self.validator: apigw.RequestValidator = self.api.add_request_validator(
            "Validator", validate_request_body=True, validate_request_parameters=True
        )
        add_routes(self.api, self.function, self.validator, self.operations)

    def _grant(
        self, bucket: s3.IBucket, state_machine: sfn.IStateMachine, config: ElsaiConfig
    ) -> tuple[str, ...]:
        """Exactly what the table's rows need; the object keys the role may put."""
        on = {"state_machine": [state_machine.state_machine_arn],
              "executions": [self.execution_arns],
              # Task-token calls name no resource: IAM only accepts "*" for them.
              "task_tokens": ["*"]}  # fmt: skip
        for target, actions in self.needs.actions.items():
            iam.Grant.add_to_principal(
                grantee=self.function, actions=list(actions), resource_arns=on[target]
            )
        if config.tenant_isolation:  # owner checks on, owners/* beside the bucket root
            return isolate_api(self.function, bucket, config, self.needs.reads, self.needs.puts)
        for prefix in self.needs.reads:
            bucket.grant_read(self.function, prefix)
        iam.Grant.add_to_principal(
            grantee=self.function,
            actions=list(_PUT),
            resource_arns=[bucket.arn_for_objects(key) for key in self.needs.puts],
        )
        return self.needs.puts

    def _rest_api(self, config: ElsaiConfig) -> apigw.RestApi:
        """The REST API: IAM auth, JSON access logs, throttling, tracing."""
        self.access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=retention(config.access_log_retention_days),
            removal_policy=cdk.RemovalPolicy.RETAIN,
        )
        return apigw.RestApi(
            self,
            "RestApi",
            description="elsai durable agent jobs",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            cloud_watch_role=True,  # required for execution logging (APIG6)
            default_method_options=method_options(self, config),  # IAM, or Cognito if set
            deploy_options=apigw.StageOptions(
                stage_name="v1",
                access_log_destination=apigw.LogGroupLogDestination(self.access_logs),
                access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
                    caller=True,
                    http_method=True,
                    ip=True,
                    protocol=True,
                    request_time=True,
                    resource_path=True,
                    response_length=True,
                    status=True,
                    user=True,
                ),
                logging_level=apigw.MethodLoggingLevel.ERROR,
                data_trace_enabled=False,  # request bodies carry prompts
                metrics_enabled=True,
                tracing_enabled=True,
                throttling_rate_limit=config.api_rate_limit,
                throttling_burst_limit=config.api_burst_limit,
            ),
        )


def add_routes(
    api: apigw.RestApi,
    function: lambda_.IFunction,
    validator: apigw.IRequestValidator,
    operations: Sequence[Operation],
) -> None:
    """A resource per path segment and a proxy method per row, validated as the row says.

    Path parameters are declared (required); query and header parameters reach the proxy
    integration undeclared and the handler validates them. A row with a request model gets
    the gateway's copy of it; a streaming row's integration streams the response.
    """
    integration = apigw.LambdaIntegration(function, proxy=True, allow_test_invoke=False)
    models: dict[str, apigw.Model] = {}
    for op in operations:
        resource = api.root
        for part in [p for p in op.path.split("/") if p]:
            resource = resource.get_resource(part) or resource.add_resource(part)
        request_models = None
        if op.request is not None:
            name = op.request.__name__
            if name not in models:
                schema = to_cdk(gateway_schema(op.request))
                models[name] = api.add_model(name, content_type="application/json", schema=schema)
            request_models = {"application/json": models[name]}
        path = {f"method.request.path.{p.name}": True for p in op.of("path")}
        streamed = apigw.LambdaIntegration(
            function, proxy=True, allow_test_invoke=False,
            response_transfer_mode=apigw.ResponseTransferMode.STREAM,
        ) if op.streams else None  # fmt: skip
        resource.add_method(
            op.method, streamed or integration, request_validator=validator,
            request_parameters=path or None, request_models=request_models,
        )  # fmt: skip
