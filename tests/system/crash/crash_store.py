"""What a crash child left behind, read without the SDK, and the spec's rules applied to it.

Nothing here imports the SDK's session code to *read* the store: stored sessions are read as
plain files or raw S3 objects, so a bug in the SDK's loader cannot hide a bug in its writer.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CHILD = str(HERE / "child_agent.py")

AGENT_ID = "worker"
POSITIONS = ("after_tools", "after_model", "both")
CHECKPOINT_FIELDS = {
    "position",
    "cycle_index",
    "schema_version",
    "created_at",
    "message_count",
    "agent_id",
    "execution_status",
}
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)$")
INTERRUPTED_MARK = "interrupted"
DENY_WARNING = "checkpoint resume denied"
ORPHAN_WARNING = "interrupted and will not be re-run"
CHILD_TIMEOUT = 60


# -- stores: read what a child left behind, without the SDK ----------------------------------


class Store:
    """A place children write sessions to; `snapshot` returns {key: bytes} under a session."""

    backend: str

    def child_args(self, case_id: str) -> dict[str, Any]:
        raise NotImplementedError

    def snapshot(self, session_id: str) -> dict[str, bytes]:
        raise NotImplementedError


class FileStore(Store):
    backend = "file"

    def __init__(self, root: Path) -> None:
        self.root = root

    def child_args(self, case_id: str) -> dict[str, Any]:
        return {"backend": "file", "storage_dir": str(self.root / case_id)}

    def snapshot(self, session_id: str) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for base in self.root.iterdir():
            top = base / f"session_{session_id}"
            if not top.is_dir():
                continue
            for path in top.rglob("*"):
                if path.is_file() and not any(
                    part.startswith(".") for part in path.relative_to(base).parts
                ):
                    found[path.relative_to(base).as_posix()] = path.read_bytes()
        return found


class S3Store(Store):
    backend = "s3"

    def __init__(self, endpoint: str, bucket: str, prefix: str = "crash/") -> None:
        import boto3

        self.client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        self.bucket = bucket
        self.prefix = prefix
        self.client.create_bucket(Bucket=bucket)

    def child_args(self, case_id: str) -> dict[str, Any]:
        return {"backend": "s3", "bucket": self.bucket, "prefix": self.prefix}

    def snapshot(self, session_id: str) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(
            Bucket=self.bucket, Prefix=f"{self.prefix}session_{session_id}/"
        ):
            for obj in page.get("Contents", []):
                body = self.client.get_object(Bucket=self.bucket, Key=obj["Key"])["Body"].read()
                found[obj["Key"][len(self.prefix) :]] = body
        return found


def child_env(s3_endpoint: str | None, tmp: Path) -> dict[str, str]:
    """Environment of every child: dummy credentials, no user AWS config, moto endpoint."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_CONFIG_FILE=str(tmp / "no-aws-config"),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp / "no-aws-credentials"),
        AWS_EC2_METADATA_DISABLED="true",
        NO_PROXY="127.0.0.1,localhost",
        PYTHONDONTWRITEBYTECODE="1",
    )
    if s3_endpoint:
        env["AWS_ENDPOINT_URL_S3"] = s3_endpoint
    return env


# -- parsed session ---------------------------------------------------------------------------


@dataclass
class Session:
    """A stored session as the parent reads it."""

    session_id: str
    raw: dict[str, bytes]
    message_indices: list[int] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    bookmark: dict[str, Any] | None = None
    agent: dict[str, Any] | None = None

    @classmethod
    def parse(cls, session_id: str, raw: dict[str, bytes], agent_id: str = AGENT_ID) -> Session:
        s = cls(session_id=session_id, raw=raw)
        agent_dir = f"session_{session_id}/agents/agent_{agent_id}/"
        by_index: dict[int, dict[str, Any]] = {}
        for key, data in raw.items():
            match = re.fullmatch(re.escape(agent_dir) + r"messages/message_(\d+)\.json", key)
            if match:
                by_index[int(match.group(1))] = json.loads(data)
        s.message_indices = sorted(by_index)
        s.records = [by_index[i] for i in s.message_indices]
        if agent_dir + "checkpoint.json" in raw:
            s.bookmark = json.loads(raw[agent_dir + "checkpoint.json"])
        if agent_dir + "agent.json" in raw:
            s.agent = json.loads(raw[agent_dir + "agent.json"])
        return s

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [r["message"] for r in self.records]


def uses(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b["toolUse"] for b in message["content"] if "toolUse" in b]


def results(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b["toolResult"] for b in message["content"] if "toolResult" in b]


def texts(message: dict[str, Any]) -> list[str]:
    return [b["text"] for b in message["content"] if "text" in b]


def result_text(result: dict[str, Any]) -> str:
    return " ".join(b.get("text", "") for b in result.get("content", []))


# -- the spec's resume rules, applied to a snapshot ---------------------------------------------


@dataclass(frozen=True)
class Expectation:
    """What the first invocation of a rebuilt agent must do with the stored state."""

    position: str | None  # resume position acted on, None = messages-only continue
    deny_warning: bool  # an active bookmark exists but fails the consistency gate
    pending: tuple[str, ...]  # tools the after_model resume must run
    interrupted: tuple[str, ...]  # orphan toolUses that must be answered "interrupted", not run


def expect(snapshot: Session, agent_id: str = AGENT_ID) -> Expectation:
    """The spec's resume semantics (checkpoints.md "Resume semantics" + the consistency gate)."""
    bookmark = snapshot.bookmark
    msgs = snapshot.messages
    last = msgs[-1] if msgs else None
    position: str | None = None
    deny = False
    if bookmark is not None and bookmark["execution_status"] == "active":
        ok = bookmark["agent_id"] == agent_id and bookmark["message_count"] == len(msgs)
        if bookmark["position"] == "after_model":
            ok = ok and last is not None and last["role"] == "assistant" and bool(uses(last))
        else:
            ok = ok and last is not None and last["role"] == "user" and bool(results(last))
        position, deny = (bookmark["position"], False) if ok else (None, True)
    pending = (
        tuple(u["toolUseId"] for u in uses(last))
        if last is not None and last["role"] == "assistant"
        else ()
    )
    if position == "after_model":
        return Expectation(position, deny, pending, ())
    return Expectation(position, deny, (), pending)


# -- children --------------------------------------------------------------------------------


@dataclass
class ChildRun:
    returncode: int
    pid: int
    stdout: str
    stderr: str
    timed_out: bool = False


def run_child(
    args: dict[str, Any], env: dict[str, str], timeout: float = CHILD_TIMEOUT
) -> ChildRun:
    proc = subprocess.Popen(
        [sys.executable, CHILD, json.dumps(args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return ChildRun(proc.returncode, proc.pid, out, err, timed_out=True)
    except BaseException:  # an interrupted test run: never leave the child running
        proc.kill()
        proc.communicate()
        raise
    return ChildRun(proc.returncode, proc.pid, out, err)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@dataclass(frozen=True)
class LedgerEntry:
    event: str
    tool_use_id: str
    key: str
    pid: int


def read_ledger(path: Path) -> list[LedgerEntry]:
    if not path.exists():
        return []
    entries = []
    for line in path.read_text().splitlines():
        event, use_id, key, pid = line.split()
        entries.append(LedgerEntry(event, use_id, key, int(pid)))
    return entries


@dataclass
class Violation:
    """One broken promise of the contract at one crash point."""

    tag: str  # short, stable category
    detail: str


@dataclass
class Calibration:
    """The uncrashed run: every storage write it made, in order, and its final state."""

    writes: list[dict[str, Any]]
    final: Session
