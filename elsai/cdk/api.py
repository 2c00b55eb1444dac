"""The jobs API: REST API Gateway (IAM auth) in front of the api Lambda.

A Standard state machine cannot sit behind ``StepFunctionsRestApi`` (Express only), and
the routes need logic (ids, task tokens in S3), so a Powertools resolver Lambda fronts
it. The API's role may only start/describe/stop/answer this one state machine's executions,
read the sessions bucket, and write cancel records under ``jobs/``.
"""

from __future__ import annotations

from typing import Any

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
from elsai.cdk.tenancy import isolate_api, method_options
from elsai.serverless import limits
from elsai.serverless.contract import CURRENT_VERSION_ENV, handler_name

# Coarse gate in front of the jobs API Lambda (lambdas/jobs_api, which validates in detail),
# built from the same limits module, so it is never stricter than the handler: a request the
# handler accepts is never refused here. The 256 KiB execution-input cap still applies.
MAX_PROMPT_CHARS = limits.MAX_PROMPT_CHARS
ID_PATTERN = limits.ID_PATTERN
API_READ_PREFIXES = ("session_*", "jobs/*")

CREATE_JOB_SCHEMA: dict[str, Any] = {
    "type": apigw.JsonSchemaType.OBJECT,
    "required": ["prompt"],
    "properties": {
        "prompt": {
            "type": apigw.JsonSchemaType.STRING,
            "min_length": 1,
            "max_length": MAX_PROMPT_CHARS,
        },
        "session_id": {"type": apigw.JsonSchemaType.STRING, "pattern": ID_PATTERN},
        "agent_id": {"type": apigw.JsonSchemaType.STRING, "pattern": ID_PATTERN},
        # Checked by the handler, whose 400 names the accepted values (a gateway enum's does not).
        "version_policy": {"type": apigw.JsonSchemaType.STRING, "max_length": 64},
    },
}
RESPONSES_SCHEMA: dict[str, Any] = {
    "type": apigw.JsonSchemaType.OBJECT,
    "required": ["responses"],
    "properties": {
        "responses": {
            "type": apigw.JsonSchemaType.ARRAY,
            "min_items": 1,
            "max_items": limits.MAX_INTERRUPT_RESPONSES,
            "items": {
                "type": apigw.JsonSchemaType.OBJECT,
                # `id` as GET shows it, or `interruptId` (accepted for compatibility).
                "required": ["response"],
                "any_of": [{"required": ["id"]}, {"required": ["interruptId"]}],
                "properties": {
                    "id": {"type": apigw.JsonSchemaType.STRING, "min_length": 1},
                    "interruptId": {"type": apigw.JsonSchemaType.STRING, "min_length": 1},
                },
            },
        }
    },
}


def _schema(spec: dict[str, Any], *, top: bool = True) -> apigw.JsonSchema:
    """Typed JsonSchema from the plain spec above ($schema on the root only)."""
    props = {k: _schema(v, top=False) for k, v in spec.get("properties", {}).items()}
    rest = {k: v for k, v in spec.items() if k not in ("properties", "items")}
    if "items" in spec:
        rest["items"] = _schema(spec["items"], top=False)
    if "any_of" in spec:
        rest["any_of"] = [_schema(choice, top=False) for choice in spec["any_of"]]
    version = apigw.JsonSchemaVersion.DRAFT4 if top else None
    return apigw.JsonSchema(schema=version, properties=props or None, **rest)


def execution_arn_pattern(stack: cdk.Stack, state_machine_name: str) -> str:
    """``arn:...:execution:<machine>:*``: every execution of this machine, nothing else."""
    return stack.format_arn(
        service="states",
        resource="execution",
        resource_name=f"{state_machine_name}:*",
        arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
    )


class JobsApi(Construct):
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
        self._isolated = config.tenant_isolation
        self._grant(bucket, state_machine)
        if config.tenant_isolation:  # owner checks on, owners/* instead of the bucket root
            isolate_api(self.function, bucket, config)
        self.api: apigw.RestApi = self._rest_api(config)
        self._routes()

    def _grant(self, bucket: s3.IBucket, state_machine: sfn.IStateMachine) -> None:
        """Exactly what the routes use: start/list/describe/stop/answer, prefix reads, two writes."""
        state_machine.grant_start_execution(self.function)
        iam.Grant.add_to_principal(  # GET /jobs
            grantee=self.function,
            actions=["states:ListExecutions"],
            resource_arns=[state_machine.state_machine_arn],
        )
        iam.Grant.add_to_principal(
            grantee=self.function,
            actions=[
                "states:DescribeExecution",
                "states:GetExecutionHistory",  # GET /jobs/{id}/events, WAITING_FOR_INPUT
                "states:StopExecution",  # DELETE /jobs/{id}
            ],
            resource_arns=[self.execution_arns],
        )
        # Task-token calls name no resource: IAM only accepts "*" for them. Only success is
        # sent (answers); nothing in the API fails a task.
        iam.Grant.add_to_principal(
            grantee=self.function,
            actions=["states:SendTaskSuccess"],
            resource_arns=["*"],
        )
        if self._isolated:
            return  # tenant isolation: owner-prefixed reads and writes only (isolate_api)
        # Reads: session summaries (session_<id>/...) and parked task tokens (jobs/...).
        for prefix in API_READ_PREFIXES:
            bucket.grant_read(self.function, prefix)
        # The API's only writes, under jobs/ (elsai.serverless.contract.service_keys): a cancel record per job and a
        # create-only claim per answered wait (DELETE /jobs/{id}, POST /jobs/{id}/responses), and
        # the job's version record (POST /jobs, POST /jobs/{id}/upgrade), and a Graph/Swarm job's
        # node waits record (POST /jobs/{id}/responses stores each node's answer there).
        iam.Grant.add_to_principal(
            grantee=self.function,
            actions=["s3:PutObject"],
            resource_arns=[
                bucket.arn_for_objects("jobs/*/cancelled.json"),
                bucket.arn_for_objects("jobs/*/answers/*"),
                bucket.arn_for_objects("jobs/*/version.json"),
                bucket.arn_for_objects("jobs/*/node_waits.json"),
            ],
        )

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

    def _routes(self) -> None:
        """Resources and methods; path parameter names match lambdas/jobs_api/routes/."""
        self.validator = self.api.add_request_validator(
            "Validator", validate_request_body=True, validate_request_parameters=True
        )
        create_job = self.api.add_model(
            "CreateJob", content_type="application/json", schema=_schema(CREATE_JOB_SCHEMA)
        )
        responses = self.api.add_model(
            "InterruptResponses",
            content_type="application/json",
            schema=_schema(RESPONSES_SCHEMA),
        )
        integration = apigw.LambdaIntegration(self.function, proxy=True, allow_test_invoke=False)
        job_id = {"method.request.path.job_id": True}

        jobs = self.api.root.add_resource("jobs")
        jobs.add_method(
            "POST", integration, request_validator=self.validator,
            request_models={"application/json": create_job},
        )  # fmt: skip
        jobs.add_method("GET", integration, request_validator=self.validator)
        job = jobs.add_resource("{job_id}")
        for method in ("GET", "DELETE"):
            job.add_method(
                method, integration, request_validator=self.validator, request_parameters=job_id
            )
        # ?after=&limit= reach the proxy integration undeclared; the handler validates them.
        job.add_resource("events").add_method(
            "GET", integration, request_validator=self.validator, request_parameters=job_id
        )
        job.add_resource("responses").add_method(
            "POST", integration, request_validator=self.validator,
            request_parameters=job_id, request_models={"application/json": responses},
        )  # fmt: skip
        job.add_resource("upgrade").add_method(
            "POST", integration, request_validator=self.validator, request_parameters=job_id
        )
        sessions = self.api.root.add_resource("sessions")
        sessions.add_resource("{session_id}").add_method(
            "GET", integration, request_validator=self.validator,
            request_parameters={"method.request.path.session_id": True},
        )  # fmt: skip
