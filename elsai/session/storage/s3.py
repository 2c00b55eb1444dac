"""Session storage in an S3 bucket.

Each write is a single PutObject, so it is atomic by itself. Single-writer safety uses S3
conditional writes: `create` sends `If-None-Match: *` (never overwrite) and `replace` sends
`If-Match: <ETag last read>`; S3 answers 412 (or 409 while a racing conditional write is in
flight) to the loser, which becomes `SessionConflictError`. The version token is the ETag.

boto3 is imported when a storage is built, not when elsai is imported, to keep `import elsai`
fast for users who never touch S3.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from elsai.session.storage.base import (
    SessionConflictError,
    StorageBackend,
    StorageError,
    StoredObject,
)

if TYPE_CHECKING:
    import boto3
    from mypy_boto3_s3 import S3Client

# Parallel GETs in read_many; the client's connection pool is sized to match so that the
# threads do not queue on (or discard) pooled connections.
MAX_PARALLEL_READS = 16

_MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound"})
# 412: the condition did not hold. 409: another conditional write to the key is in progress.
_CONFLICT_CODES = frozenset({"PreconditionFailed", "412", "ConditionalRequestConflict", "409"})


def _shared_client(boto_session: Any, region_name: str | None) -> Any:
    """The process-wide S3 client (see elsai.aws_clients), with retries and a pool sized for
    the parallel reads of `read_many`."""
    from botocore.config import Config

    from elsai.aws_clients import shared_client

    config = Config(
        retries={"mode": "standard"},
        user_agent_extra="elsai",
        max_pool_connections=MAX_PARALLEL_READS,
    )
    return shared_client(
        "s3",
        boto_session=boto_session,
        region_name=region_name,
        config=config,
        config_key="elsai-storage",
    )


def normalize_prefix(prefix: str) -> str:
    """An empty prefix stays empty; any other ends with one "/" and has no leading "/"."""
    prefix = prefix.lstrip("/")
    if prefix and not prefix.endswith("/"):
        prefix += "/"
    return prefix


class S3Storage(StorageBackend):
    """Objects in `bucket` under `prefix`.

    The client comes from `client` if given, else from `boto_session` (or a default
    `boto3.Session()`), so the standard AWS configuration applies: credentials chain,
    `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`, profiles, region.
    """

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        boto_session: boto3.Session | None = None,
        region_name: str | None = None,
        client: S3Client | Any | None = None,
    ) -> None:
        if not bucket:
            raise ValueError("S3Storage needs a bucket name")
        self.bucket = bucket
        self.prefix = normalize_prefix(prefix)
        if client is None:
            client = _shared_client(boto_session, region_name)
        self._client: S3Client = client

    def __repr__(self) -> str:
        return f"S3Storage(bucket={self.bucket!r}, prefix={self.prefix!r})"

    def describe(self, key: str) -> str:
        return f"s3://{self.bucket}/{self.prefix}{key}"

    # -- reads -------------------------------------------------------------------------------

    def read(self, key: str) -> StoredObject | None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = self._client.get_object(Bucket=self.bucket, Key=self.prefix + key)
            data = response["Body"].read()
        except ClientError as exc:
            if _error_code(exc) in _MISSING_CODES:
                return None
            raise self._storage_error("read", key, exc) from exc
        except BotoCoreError as exc:
            raise self._storage_error("read", key, exc) from exc
        return StoredObject(data=data, version=response["ETag"])

    def read_many(self, keys: Sequence[str]) -> list[StoredObject | None]:
        """GET the keys in parallel (bounded), results in the order of `keys`.

        A short-lived pool per call: threads are cheap next to S3 round trips, and nothing is
        left running between calls (which matters in Lambda, where the process is frozen).
        """
        if len(keys) <= 1:
            return [self.read(k) for k in keys]
        with ThreadPoolExecutor(
            max_workers=min(MAX_PARALLEL_READS, len(keys)), thread_name_prefix="elsai-s3-read"
        ) as pool:
            return list(pool.map(self.read, keys))

    def list(self, prefix: str) -> list[str]:
        from botocore.exceptions import BotoCoreError, ClientError

        full_prefix = self.prefix + prefix
        keys: list[str] = []
        try:
            paginator = self._client.get_paginator("list_objects_v2")
            for page in paginator.paginate(Bucket=self.bucket, Prefix=full_prefix):
                for obj in page.get("Contents", []):
                    keys.append(obj["Key"][len(self.prefix) :])
        except (ClientError, BotoCoreError) as exc:
            raise self._storage_error("list", prefix, exc) from exc
        return keys

    # -- writes ------------------------------------------------------------------------------

    def create(self, key: str, data: bytes) -> str:
        return self._put(key, data, if_match=None)

    def replace(self, key: str, data: bytes, *, expected_version: str | None) -> str:
        return self._put(key, data, if_match=expected_version)

    def _put(self, key: str, data: bytes, *, if_match: str | None) -> str:
        """One conditional PutObject: `If-None-Match: *` when `if_match` is None."""
        from botocore.exceptions import BotoCoreError, ClientError

        full_key = self.prefix + key
        try:
            if if_match is None:
                response = self._client.put_object(
                    Bucket=self.bucket, Key=full_key, Body=data, IfNoneMatch="*"
                )
            else:
                response = self._client.put_object(
                    Bucket=self.bucket, Key=full_key, Body=data, IfMatch=if_match
                )
        except ClientError as exc:
            code = _error_code(exc)
            # IfMatch on a key that does not exist answers NoSuchKey: the stored state is not
            # the one this writer saw, so it is a conflict like any other, not a failure.
            if code in _CONFLICT_CODES or (if_match is not None and code in _MISSING_CODES):
                raise SessionConflictError(self._conflict_message(key, if_match, code)) from exc
            raise self._storage_error("write", key, exc) from exc
        except BotoCoreError as exc:
            raise self._storage_error("write", key, exc) from exc
        return response["ETag"]

    # -- errors ------------------------------------------------------------------------------

    def _conflict_message(self, key: str, if_match: str | None, code: str) -> str:
        url = self.describe(key)
        if if_match is None:
            return (
                f"{url} already exists ({code}): another writer created it first; "
                "nothing was overwritten"
            )
        return (
            f"{url} changed since it was read (expected ETag {if_match}, S3 said {code}): "
            "another writer got there first; nothing was overwritten"
        )

    def _storage_error(self, action: str, key: str, exc: Exception) -> StorageError:
        from botocore.exceptions import ClientError

        url = self.describe(key)
        if isinstance(exc, ClientError):
            message = exc.response.get("Error", {}).get("Message", "")
            detail = f"{_error_code(exc)}" + (f": {message}" if message else "")
        else:
            detail = f"{type(exc).__name__}: {exc}"
        return StorageError(f"cannot {action} {url}: {detail}")


def _error_code(exc: Any) -> str:
    """The AWS error code of a ClientError ('NoSuchKey', 'PreconditionFailed', '404', ...)."""
    error = exc.response.get("Error", {})
    code = error.get("Code")
    if code:
        return str(code)
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return str(status) if status else "Unknown"
