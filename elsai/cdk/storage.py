"""The sessions bucket: where agents' transcripts, checkpoints and task tokens live.

Everything durable about a job is here (``session_<id>/...`` and ``jobs/<job_id>/...``),
so the bucket is locked down: SSE, TLS-only, no public access, versioned (a bad write
can be rolled back) and logged to a separate access-log bucket.

No lifecycle rule touches ``session_*``: object age is not session activity, and expiring
``message_0.json`` of a session still in use would leave holes in its transcript. Sessions
go whole, by last activity, through the opt-in sweeper (``elsai/cdk/retention.py``).
"""

from __future__ import annotations

import aws_cdk as cdk
from aws_cdk import aws_s3 as s3
from constructs import Construct

from elsai.serverless.contract.service_keys import EXPIRING_TAG, JOBS_PREFIX


class SessionsBucket(Construct):
    """Sessions bucket + its server-access-log bucket."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        token_retention_days: int,
        noncurrent_version_days: int,
        access_log_retention_days: int,
    ) -> None:
        super().__init__(scope, construct_id)
        # Grant log delivery through a bucket policy, not the legacy LogDeliveryWrite ACL
        # (ACLs are disabled by BUCKET_OWNER_ENFORCED). Set here so the construct does
        # not depend on cdk.json.
        self.node.set_context("@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy", True)
        # SSE-S3 because S3 server access logging cannot deliver to SSE-KMS buckets.
        self.access_logs = s3.Bucket(
            self,
            "AccessLogs",
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            removal_policy=cdk.RemovalPolicy.RETAIN,
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="expire-access-logs",
                    expiration=cdk.Duration.days(access_log_retention_days),
                    abort_incomplete_multipart_upload_after=cdk.Duration.days(1),
                )
            ],
        )
        self.bucket = s3.Bucket(
            self,
            "Bucket",
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            versioned=True,
            removal_policy=cdk.RemovalPolicy.RETAIN,
            server_access_logs_bucket=self.access_logs,
            server_access_logs_prefix="sessions-bucket/",
            lifecycle_rules=[
                # checkpoint.json is replaced at every loop boundary: without this rule
                # versioning would keep every bookmark forever.
                s3.LifecycleRule(
                    id="expire-noncurrent-versions",
                    noncurrent_version_expiration=cdk.Duration.days(noncurrent_version_days),
                    abort_incomplete_multipart_upload_after=cdk.Duration.days(1),
                ),
                # A parked task token is one object per job, useless once the interrupt
                # wait is over: object age is the right measure here (sessions: see above).
                s3.LifecycleRule(
                    id="expire-parked-task-tokens",
                    prefix=JOBS_PREFIX,
                    expiration=cdk.Duration.days(token_retention_days),
                ),
                # The same under every owner's owners/<tag>/jobs/ (tenant isolation): a
                # lifecycle prefix has no wildcards, so the token's writer tags it instead.
                s3.LifecycleRule(
                    id="expire-tagged-parked-task-tokens",
                    tag_filters={EXPIRING_TAG[0]: EXPIRING_TAG[1]},
                    expiration=cdk.Duration.days(token_retention_days),
                ),
                s3.LifecycleRule(
                    id="remove-expired-delete-markers",
                    expired_object_delete_marker=True,
                ),
            ],
        )
