"""Session storage in an S3 bucket.

Each write is a single PutObject, so it is atomic by itself. Single-writer safety uses S3
conditional writes: `create` sends `If-None-Match: *` (never overwrite) and `replace` sends
`If-Match: <ETag last read>`; S3 answers 412 to the loser, which becomes
`SessionConflictError`. The version token is the ETag.

Lost responses. botocore retries a PUT whose response never arrived (read timeout, connection
reset), but S3 may already have applied the first attempt; the retry then meets its own write
and gets 412. So a 412 to a request botocore *retried* (`RetryAttempts > 0`) is checked by
reading the key back: if it holds exactly the bytes this call sent, the write is this writer's
own and succeeds with the stored ETag; anything else is a real conflict, as before. The same
check runs when botocore gives up with a network error after sending, since the write may have
landed then too. A 412 to a request sent once is a conflict, whatever the stored bytes: no
attempt of this writer can have landed, so another writer did (a stalled "zombie" writer
repeating the same merge as its successor is refused at once). (That
happens sooner than its attempt count suggests: standard retry mode spends a per-client quota
of 500 units at 14 a retry, refilled by successes, so after about 35 retries in a burst
botocore stops retrying; an applied write is still recognized then, and anything else is a
`StorageError`, which the state machine retries.)

Why equal bytes are enough after a retry, with no writer token in the object: the caller only
needs the store to hold what it asked for and to know that object's version. If a *different*
writer stored the very same bytes in that window, the store still holds exactly that, with that
ETag, so each writer's view is true and nothing was overwritten. Had the versions really diverged (the other
writer wrote something else at any point after), the bytes differ, or the writer's *next*
conditional write meets a version it never saw and conflicts there. Equal bytes therefore
never hide a lost update; they only hide a race whose outcome is the same either way.

409 `ConditionalRequestConflict` means another conditional write to the key is still in
flight (possibly this writer's own lost attempt): it is retried with jittered backoff, a
bounded number of times, and is not by itself a lost race.

boto3 is imported when a storage is built, not when elsai is imported, to keep `import elsai`
fast for users who never touch S3.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from elsai.session.storage.base import (
    CONFLICT_ADVICE,
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
# 403: forbidden, or missing to a caller whose s3:ListBucket is limited by s3:prefix.
_FORBIDDEN_CODES = frozenset({"AccessDenied", "403", "Forbidden"})
# 412: the condition did not hold (someone, maybe this writer's own lost attempt, wrote first).
_PRECONDITION_CODES = frozenset({"PreconditionFailed", "412"})
# 409: another conditional write to the key is in progress; retried, not a lost race.
_IN_FLIGHT_CODES = frozenset({"ConditionalRequestConflict", "409"})

#: How often a 409 is retried, and the backoff cap (seconds) of full-jitter exponential waits
#: starting at 50 ms: at most about 3 s in all, far below a slice's stop margin.
IN_FLIGHT_RETRIES = 6
IN_FLIGHT_MAX_BACKOFF_S = 1.0
_IN_FLIGHT_BASE_BACKOFF_S = 0.05


def _shared_client(boto_session: Any, region_name: str | None) -> Any:
    """The process-wide S3 client (see elsai.aws_clients).

    Standard retries, and a pool sized for the parallel reads of `read_many`.
    """
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
    """Objects in `bucket` under `prefix`, written with S3 conditional writes.

    The client comes from `client` if given, else from `boto_session` (or a default
    `boto3.Session()`), so the standard AWS configuration applies: credentials chain,
    `AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`, profiles, region.

    Args:
        bucket: The bucket name (must exist).
        prefix: Key prefix for every object; normalized to end with one "/".
        boto_session: The session to build the shared client from.
        region_name: The client's region, when not the session's.
        client: A ready S3 client; `boto_session` and `region_name` are then ignored.
        tagging: The ``Tagging`` a write of a key (relative to `prefix`) carries, or None: the
            caller's policy (its lifecycle rules find some of its objects by tag).
    """

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        boto_session: boto3.Session | None = None,
        region_name: str | None = None,
        client: S3Client | Any | None = None,
        tagging: Callable[[str], str | None] | None = None,
    ) -> None:
        """Check the bucket name and get the client; no request is sent."""
        if not bucket:
            raise ValueError("S3Storage needs a bucket name")
        self.bucket = bucket
        self.prefix: str = normalize_prefix(prefix)
        if client is None:
            client = _shared_client(boto_session, region_name)
        self._client: S3Client = client
        self._tagging = tagging
        #: How 409 backoff waits; tests replace it to record the waits instead of sleeping.
        self._sleep: Callable[[float], None] = time.sleep

    def __repr__(self) -> str:
        """Where the objects live."""
        return f"S3Storage(bucket={self.bucket!r}, prefix={self.prefix!r})"

    def describe(self, key: str) -> str:
        """The object's s3:// URL, for error messages."""
        return f"s3://{self.bucket}/{self.prefix}{key}"

    # -- reads -------------------------------------------------------------------------------

    def read(self, key: str) -> StoredObject | None:
        """GET `key`: its bytes and ETag, or None if there is no such object.

        Raises:
            StorageError: Any other S3 or network failure.
        """
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = self._client.get_object(Bucket=self.bucket, Key=self.prefix + key)
            data = response["Body"].read()
        except ClientError as exc:
            if _error_code(exc) in _MISSING_CODES:
                return None
            if _error_code(exc) in _FORBIDDEN_CODES and not self._listed(key):
                return None  # missing: S3 said 403 only because this caller's listing is scoped
            raise self._storage_error("read", key, exc) from exc
        except BotoCoreError as exc:
            raise self._storage_error("read", key, exc) from exc
        return StoredObject(data=data, version=response["ETag"])

    def _listed(self, key: str) -> bool:
        """Whether `key` exists, asked by listing it: True too when the listing is refused.

        S3 answers a GET of a missing key with 404 only to a caller that may list the bucket
        with no ``s3:prefix`` (a GET carries none); a per-job session policy lists only its
        own prefixes, so its missing keys come back 403. Listing the key itself is allowed
        under those prefixes: absent there, it is missing; present, or the listing refused
        too, the 403 was a real "forbidden".
        """
        from botocore.exceptions import BotoCoreError, ClientError

        full_key = self.prefix + key
        try:
            page = self._client.list_objects_v2(Bucket=self.bucket, Prefix=full_key, MaxKeys=1)
        except (ClientError, BotoCoreError):
            return True
        return any(obj.get("Key") == full_key for obj in page.get("Contents", []))

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
        """Every key under `prefix` (relative to the storage prefix), paginated.

        Raises:
            StorageError: S3 or the network failed.
        """
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
        """Write a new object with `If-None-Match: *`; see the module docstring on retries.

        Returns:
            The ETag of the stored object.

        Raises:
            SessionConflictError: The key holds other bytes (another writer created it).
            StorageError: S3 failed, or kept a write to the key in flight past the retries.
        """
        return self._put(key, data, if_match=None)

    def replace(self, key: str, data: bytes, *, expected_version: str | None) -> str:
        """Write `data` only if the stored ETag is still `expected_version` (`If-Match`).

        `expected_version=None` means "create": the key must not exist yet.

        Returns:
            The ETag of the stored object.

        Raises:
            SessionConflictError: The key changed since it was read (or vanished).
            StorageError: S3 failed, or kept a write to the key in flight past the retries.
        """
        return self._put(key, data, if_match=expected_version)

    def _put(self, key: str, data: bytes, *, if_match: str | None) -> str:
        """A conditional PutObject that tells this writer's own lost write from a real loser.

        409 is retried with backoff. A 412 after botocore retried the request (or a network
        failure after its retries) reads the key back: the writer's own bytes there mean its
        earlier attempt landed. A 412 to a request sent once is always a conflict.
        """
        from botocore.exceptions import BotoCoreError, ClientError, HTTPClientError

        maybe_applied = False  # did an earlier attempt of this write possibly land?
        for attempt in range(IN_FLIGHT_RETRIES + 1):
            try:
                return self._put_once(key, data, if_match)
            except ClientError as exc:
                maybe_applied = maybe_applied or _retried(exc)
                code = _error_code(exc)
                if code in _IN_FLIGHT_CODES and attempt < IN_FLIGHT_RETRIES:
                    self._sleep(_in_flight_backoff(attempt))
                    continue
                rejected = code in _PRECONDITION_CODES or (
                    if_match is not None and code in _MISSING_CODES
                )
                if not rejected and code not in _IN_FLIGHT_CODES:
                    raise self._storage_error("write", key, exc) from exc
                own = self._own_write(key, data, exc) if maybe_applied else None
                if own is not None:
                    return own
                if code in _IN_FLIGHT_CODES:
                    raise StorageError(
                        f"cannot write {self.describe(key)}: another conditional write to it "
                        f"stayed in flight through {IN_FLIGHT_RETRIES} retries ({code})"
                    ) from exc
                # IfMatch on a key that does not exist answers NoSuchKey: the stored state is
                # not the one this writer saw, so it is a conflict like any other.
                raise SessionConflictError(self._conflict_message(key, if_match, code)) from exc
            except BotoCoreError as exc:
                # botocore gave up on the network after sending: the write may have landed.
                # (Other BotoCoreErrors, e.g. a ParamValidationError, never sent anything.)
                if isinstance(exc, HTTPClientError):
                    own = self._own_write(key, data, exc)
                    if own is not None:
                        return own
                raise self._storage_error("write", key, exc) from exc
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _put_once(self, key: str, data: bytes, if_match: str | None) -> str:
        full_key = self.prefix + key
        extra: dict[str, str] = {}
        tagging = self._tagging(key) if self._tagging is not None else None
        if tagging:
            extra["Tagging"] = tagging
        if if_match is None:
            extra["IfNoneMatch"] = "*"
        else:
            extra["IfMatch"] = if_match
        response = self._client.put_object(Bucket=self.bucket, Key=full_key, Body=data, **extra)  # type: ignore[arg-type]
        return response["ETag"]

    def _own_write(self, key: str, data: bytes, cause: Exception) -> str | None:
        """The stored ETag if `key` holds exactly `data`, else None.

        A failing read-back is a StorageError (retryable), not a conflict: it is unknown
        whether the write landed, and calling it a lost race would fail the job for a blip.
        """
        try:
            stored = self.read(key)
        except StorageError as exc:
            raise StorageError(
                f"cannot tell whether the write of {self.describe(key)} landed "
                f"({type(cause).__name__}), the read-back failed: {exc}"
            ) from cause
        if stored is not None and stored.data == data:
            return stored.version
        return None

    # -- errors ------------------------------------------------------------------------------

    def _conflict_message(self, key: str, if_match: str | None, code: str) -> str:
        url = self.describe(key)
        if if_match is None:
            return (
                f"{url} already exists ({code}): another writer created it first; "
                "nothing was overwritten" + CONFLICT_ADVICE
            )
        return (
            f"{url} changed since it was read (expected ETag {if_match}, S3 said {code}): "
            "another writer got there first; nothing was overwritten" + CONFLICT_ADVICE
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


def _in_flight_backoff(attempt: int) -> float:
    """Full jitter: uniform in [0, min(cap, 50 ms * 2**attempt)]."""
    cap = min(IN_FLIGHT_MAX_BACKOFF_S, _IN_FLIGHT_BASE_BACKOFF_S * (2**attempt))
    return random.uniform(0.0, cap)


def _retried(exc: Any) -> bool:
    """Whether botocore sent this request more than once.

    An earlier attempt may then have been applied although its response was lost.
    """
    attempts = exc.response.get("ResponseMetadata", {}).get("RetryAttempts", 0)
    return isinstance(attempts, int) and attempts > 0


def _error_code(exc: Any) -> str:
    """The AWS error code of a ClientError ('NoSuchKey', 'PreconditionFailed', '404', ...)."""
    error = exc.response.get("Error", {})
    code = error.get("Code")
    if code:
        return str(code)
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return str(status) if status else "Unknown"
