"""Jobs pinned to the agent function version they started on.

Each deploy that changes the agent function publishes a new version (``currentVersion``,
retained: CloudFormation never deletes an old one on update, so a job that waits for days still
finds its code). A job's input names the qualified ARN of the version it runs on
(``agent_function``, set by the jobs API at start); a job started without it gets this deploy's
version (``PinCurrentVersion``). Every agent task invokes ``$.agent_function``, so the machine's
role may invoke qualified ARNs of the function only, never the bare (``$LATEST``) function.
An upgraded job's answer names its new version; ``UpgradeOnResume`` moves the job to it.
"""

from __future__ import annotations

from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from elsai.serverless.contract import AGENT_FUNCTION_FIELD, AGENT_FUNCTION_PATH


def pin_version(
    scope: Construct, current_version: lambda_.IVersion, start: sfn.IChainable
) -> sfn.Choice:
    """PinVersion: keep the input's version, or pin the job to this deploy's version."""
    pin = sfn.Pass(
        scope,
        "PinCurrentVersion",
        comment="A job started without a version runs on the version current at its start.",
        result=sfn.Result.from_string(current_version.function_arn),
        result_path=AGENT_FUNCTION_PATH,
    )
    choice = sfn.Choice(
        scope, "PinVersion", comment="Which agent function version this job runs on."
    )
    choice.when(sfn.Condition.is_not_present(AGENT_FUNCTION_PATH), pin.next(start))
    return choice.otherwise(start)


def upgrade_on_resume(
    scope: Construct,
    resume: sfn.IChainable,
    resume_upgraded: sfn.IChainable,
    state_name: str = "UpgradeOnResume",
) -> sfn.Choice:
    """UpgradeOnResume: an answer that names a version (an upgraded job) moves the job to it."""
    choice = sfn.Choice(scope, state_name)
    choice.when(sfn.Condition.is_present(f"$.answer.{AGENT_FUNCTION_FIELD}"), resume_upgraded)
    return choice.otherwise(resume)


def grant_version_invokes(machine: sfn.StateMachine, function: lambda_.IFunction) -> None:
    """lambda:InvokeFunction on the function's qualified ARNs (its versions) and nothing else."""
    machine.add_to_role_policy(
        iam.PolicyStatement(
            actions=["lambda:InvokeFunction"],
            resources=[f"{function.function_arn}:*"],
        )
    )
