"""Sessions bucket: encrypted, private, TLS-only, versioned, aged out, access-logged."""

from __future__ import annotations

from typing import Any

from aws_cdk.assertions import Match, Template


def _buckets(template_dict: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        k: v["Properties"]
        for k, v in template_dict["Resources"].items()
        if v["Type"] == "AWS::S3::Bucket"
    }


def _sessions_bucket(template_dict: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    (item,) = [(k, v) for k, v in _buckets(template_dict).items() if k.startswith("SessionsBucket")]
    return item


def test_every_bucket_is_encrypted_private_and_owner_enforced(
    template_dict: dict[str, Any],
) -> None:
    buckets = _buckets(template_dict)
    assert len(buckets) == 2  # sessions + access logs
    for props in buckets.values():
        sse = props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
        assert sse["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
        assert props["PublicAccessBlockConfiguration"] == {
            "BlockPublicAcls": True,
            "BlockPublicPolicy": True,
            "IgnorePublicAcls": True,
            "RestrictPublicBuckets": True,
        }
        assert props["OwnershipControls"]["Rules"] == [{"ObjectOwnership": "BucketOwnerEnforced"}]


def test_sessions_bucket_is_versioned_and_logged(template_dict: dict[str, Any]) -> None:
    _, props = _sessions_bucket(template_dict)
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    logging = props["LoggingConfiguration"]
    assert logging["DestinationBucketName"]["Ref"].startswith("SessionsAccessLogs")
    assert logging["LogFilePrefix"] == "sessions-bucket/"


def test_lifecycle_expires_parked_tokens_and_noncurrent_versions(
    template_dict: dict[str, Any],
) -> None:
    _, props = _sessions_bucket(template_dict)
    rules = {r["Id"]: r for r in props["LifecycleConfiguration"]["Rules"]}
    assert all(r["Status"] == "Enabled" for r in rules.values())
    # Sessions never expire by object age (see test_least_privilege / the sweeper).
    assert "expire-old-sessions" not in rules
    assert rules["expire-parked-task-tokens"]["Prefix"] == "jobs/"
    assert rules["expire-parked-task-tokens"]["ExpirationInDays"] == 8  # 7-day wait + 1
    assert rules["expire-noncurrent-versions"]["NoncurrentVersionExpiration"] == {
        "NoncurrentDays": 7
    }
    assert rules["expire-noncurrent-versions"]["AbortIncompleteMultipartUpload"] == {
        "DaysAfterInitiation": 1
    }
    assert rules["remove-expired-delete-markers"]["ExpiredObjectDeleteMarker"] is True


def test_both_buckets_deny_non_tls_requests(
    template: Template, template_dict: dict[str, Any]
) -> None:
    policies = template.find_resources("AWS::S3::BucketPolicy")
    assert len(policies) == 2
    for name in _buckets(template_dict):
        template.has_resource_properties(
            "AWS::S3::BucketPolicy",
            {
                "Bucket": {"Ref": name},
                "PolicyDocument": {
                    "Statement": Match.array_with(
                        [
                            Match.object_like(
                                {
                                    "Effect": "Deny",
                                    "Action": "s3:*",
                                    "Principal": {"AWS": "*"},
                                    "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                                }
                            )
                        ]
                    )
                },
            },
        )


def test_access_log_bucket_accepts_only_s3_log_delivery(template: Template) -> None:
    template.has_resource_properties(
        "AWS::S3::BucketPolicy",
        {
            "Bucket": {"Ref": Match.string_like_regexp("^SessionsAccessLogs")},
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Effect": "Allow",
                                "Action": "s3:PutObject",
                                "Principal": {"Service": "logging.s3.amazonaws.com"},
                            }
                        )
                    ]
                )
            },
        },
    )


def test_buckets_are_retained_on_stack_delete(template_dict: dict[str, Any]) -> None:
    for name in _buckets(template_dict):
        res = template_dict["Resources"][name]
        assert res["DeletionPolicy"] == "Retain" and res["UpdateReplacePolicy"] == "Retain"
