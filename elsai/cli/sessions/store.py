"""Open the session store named on the command line, and list it with modification times.

The storage backends only move bytes and have no notion of time; `ls` and `tail` need "last
update", so this module lists with times itself (file mtimes, S3 LastModified) using the same
S3 client it hands to the backend, without touching the backend's internals.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from elsai.ids import validate_id
from elsai.session.layout import keys
from elsai.session.storage.base import StorageBackend
from elsai.session.storage.file import FileStorage

DEFAULT_STORAGE_DIR = "./sessions"


class CliError(Exception):
    """A user-facing failure: one line on stderr and this exit code."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass
class Store:
    """The store a command reads: the byte backend plus key listing with modification times."""

    storage: StorageBackend
    location: str  # what a person typed: a directory or s3://bucket/prefix
    _times: Callable[[str], dict[str, float]]

    def times(self, prefix: str) -> dict[str, float]:
        """Every key under `prefix` with its modification time (epoch seconds)."""
        return self._times(prefix)

    def require_session(self, session_id: str) -> None:
        """Exit 2 with one clear line unless the session id is valid and something is stored."""
        try:
            validate_id(session_id, "session id")
        except ValueError as exc:
            raise CliError(str(exc), 2) from None
        if not self.storage.list(keys.session_dir(session_id)):
            raise CliError(f"no session {session_id} in {self.location}", 2)


def open_store(storage_dir: str | None, s3_url: str | None) -> Store:
    """The store `--storage-dir` or `--s3` names; a clear exit-2 error if it is unusable."""
    if storage_dir and s3_url:
        raise CliError("use either --storage-dir or --s3, not both", 2)
    if s3_url:
        return _s3_store(s3_url)
    directory = storage_dir or DEFAULT_STORAGE_DIR
    if not os.path.isdir(directory):
        raise CliError(
            f"no session store at {directory} (use --storage-dir DIR or --s3 s3://bucket/prefix)", 2
        )
    storage = FileStorage(directory)

    def file_times(prefix: str) -> dict[str, float]:
        out = {}
        for key in storage.list(prefix):
            try:
                out[key] = os.stat(storage.describe(key)).st_mtime
            except FileNotFoundError:
                continue  # removed since the listing
        return out

    return Store(storage, directory, file_times)


def parse_s3_url(url: str) -> tuple[str, str]:
    """s3://bucket[/prefix] -> (bucket, prefix)."""
    if not url.startswith("s3://") or not url[5:].split("/", 1)[0]:
        raise CliError(f"--s3 expects s3://bucket[/prefix], got {url!r}", 2)
    bucket, _, prefix = url[5:].partition("/")
    return bucket, prefix


def _s3_store(url: str) -> Store:
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError

    from elsai.session.storage.base import StorageError
    from elsai.session.storage.s3 import S3Storage

    bucket, prefix = parse_s3_url(url)
    client: Any = boto3.Session().client(
        "s3",
        config=Config(
            retries={"mode": "standard"}, user_agent_extra="elsai-cli", max_pool_connections=16
        ),
    )
    storage = S3Storage(bucket, prefix, client=client)

    def s3_times(sub: str) -> dict[str, float]:
        out = {}
        try:
            for page in client.get_paginator("list_objects_v2").paginate(
                Bucket=bucket, Prefix=storage.prefix + sub
            ):
                for obj in page.get("Contents", []):
                    out[obj["Key"][len(storage.prefix) :]] = obj["LastModified"].timestamp()
        except (ClientError, BotoCoreError) as exc:
            raise StorageError(f"cannot list {storage.describe(sub)}: {exc}") from exc
        return out

    return Store(storage, url.rstrip("/"), s3_times)
