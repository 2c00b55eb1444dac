"""S3 for the benchmarks: a moto server in its own process on loopback, and a request counter.

The server runs as a child process (not a thread of the benchmark) so that its request
handling does not compete with the agents for this process's GIL: every S3 call pays a real
loopback HTTP round trip, as against a remote endpoint, only much faster.

Both frameworks build their boto3 clients from the standard configuration, so pointing
`AWS_ENDPOINT_URL_S3` at the server is all it takes to reach it.
"""

from __future__ import annotations

import collections
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MotoServer:
    """`python -m moto.server` on 127.0.0.1; stop() ends exactly the process it started."""

    def __init__(self) -> None:
        self.port = _free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self) -> MotoServer:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(self.endpoint + "/moto-api/", timeout=1).read()
                break
            except OSError:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto server did not start") from None
                time.sleep(0.1)
        return self

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None


def configure_environment(endpoint: str) -> None:
    """Fake credentials and the endpoint, through the standard variables both SDKs honour."""
    os.environ["AWS_ACCESS_KEY_ID"] = "testing"
    os.environ["AWS_SECRET_ACCESS_KEY"] = "testing"
    os.environ["AWS_SESSION_TOKEN"] = "testing"
    os.environ["AWS_DEFAULT_REGION"] = "us-east-1"
    os.environ["AWS_REGION"] = "us-east-1"
    os.environ["AWS_ENDPOINT_URL_S3"] = endpoint
    os.environ.pop("AWS_PROFILE", None)


def admin_client() -> Any:
    import boto3
    from botocore.config import Config

    return boto3.Session().client("s3", config=Config(max_pool_connections=32))


# -- request counting -----------------------------------------------------------------------


class RequestCounter:
    """Counts S3 API calls by operation name, for every botocore client in the process.

    It wraps `BaseClient._make_api_call`, the single funnel every client operation (and every
    paginator page) goes through, so it sees the calls of clients the SDKs build internally,
    including calls made from their worker threads. Retries inside one call are not counted
    separately (none happen against the local server). It also adds up the wall time of the
    calls per operation (calls made in parallel threads overlap, so sums can exceed wall time).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: collections.Counter[str] = collections.Counter()
        self.seconds: collections.Counter[str] = collections.Counter()
        self.enabled = False
        self._original: Any = None

    def install(self) -> None:
        from botocore.client import BaseClient

        if self._original is not None:
            return
        original = BaseClient._make_api_call
        counter = self

        def counted(client: Any, operation_name: str, api_params: Any) -> Any:
            if not (counter.enabled and client.meta.service_model.service_name == "s3"):
                return original(client, operation_name, api_params)
            start = time.perf_counter()
            try:
                return original(client, operation_name, api_params)
            finally:
                elapsed = time.perf_counter() - start
                with counter._lock:
                    counter.counts[operation_name] += 1
                    counter.seconds[operation_name] += elapsed

        self._original = original
        BaseClient._make_api_call = counted  # type: ignore[method-assign]

    def uninstall(self) -> None:
        from botocore.client import BaseClient

        if self._original is not None:
            BaseClient._make_api_call = self._original  # type: ignore[method-assign]
            self._original = None

    @contextmanager
    def counting(self) -> Iterator[collections.Counter[str]]:
        """Count the calls made inside the block; yields the Counter filled on exit.

        The time per operation is left in `last_seconds` when the block ends.
        """
        result: collections.Counter[str] = collections.Counter()
        with self._lock:
            self.counts = collections.Counter()
            self.seconds = collections.Counter()
            self.enabled = True
        try:
            yield result
        finally:
            with self._lock:
                self.enabled = False
                result.update(self.counts)
                self.last_seconds = dict(self.seconds)


# -- bucket helpers ------------------------------------------------------------------------


def create_bucket(client: Any, bucket: str) -> None:
    client.create_bucket(Bucket=bucket)


def upload_tree(client: Any, bucket: str, root: str, *, workers: int = 16) -> int:
    """Mirror every non-hidden file under `root` to `bucket` with the same relative keys."""
    items: list[tuple[str, str]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if name.startswith("."):
                continue
            path = os.path.join(dirpath, name)
            items.append((path, os.path.relpath(path, root).replace(os.sep, "/")))

    def put(item: tuple[str, str]) -> None:
        with open(item[0], "rb") as f:
            client.put_object(Bucket=bucket, Key=item[1], Body=f.read())

    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(put, items))
    return len(items)


def list_keys(client: Any, bucket: str, prefix: str = "") -> list[str]:
    keys: list[str] = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys.extend(obj["Key"] for obj in page.get("Contents", []))
    return keys


class BucketSnapshot:
    """Remember a bucket's keys (and the bytes of its non-message objects) to undo a run.

    A timed resume appends a few messages and rewrites agent.json / checkpoint.json. Restoring
    deletes the message keys past the stored count and puts the small mutable files back, so
    every repeat resumes exactly the same stored session. It does not LIST (a 1,000-key LIST
    is slow on moto); `verify()` does, once, at the end.
    """

    def __init__(self, client: Any, bucket: str, *, max_added_messages: int = 50) -> None:
        self.client, self.bucket = client, bucket
        self.keys = set(list_keys(client, bucket))
        self.small: dict[str, bytes] = {}
        self.next_message: dict[str, int] = {}
        for key in self.keys:
            if "/messages/" in key:
                directory, name = key.rsplit("/", 1)
                index = int(name[len("message_") : -len(".json")])
                self.next_message[directory] = max(self.next_message.get(directory, 0), index + 1)
            else:
                self.small[key] = client.get_object(Bucket=bucket, Key=key)["Body"].read()
        self.max_added = max_added_messages

    def restore(self) -> None:
        added = [
            f"{directory}/message_{i}.json"
            for directory, start in self.next_message.items()
            for i in range(start, start + self.max_added)
        ]
        self.client.delete_objects(
            Bucket=self.bucket, Delete={"Objects": [{"Key": k} for k in added], "Quiet": True}
        )
        for key, data in self.small.items():
            self.client.put_object(Bucket=self.bucket, Key=key, Body=data)

    def verify(self) -> None:
        now = set(list_keys(self.client, self.bucket))
        if now != self.keys:
            raise RuntimeError(
                f"bucket {self.bucket} was not restored: +{sorted(now - self.keys)[:5]} -{sorted(self.keys - now)[:5]}"
            )
