"""Parent side of the crash tests: spawn children, snapshot the store, judge each crash point.

Nothing here imports the SDK's session code to *read* the store: stored sessions are read as
plain files or raw S3 objects, so a bug in the SDK's loader cannot hide a bug in its writer.
The expected outcome of every crash point is derived from the spec's rules applied to what was
durable at the moment of the crash (the snapshot), not from a hand-written table.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CHILD = str(HERE / "child_agent.py")
sys.path.insert(0, str(HERE))

import child_agent as child  # noqa: E402  (constants shared with the child: prompts, tool ids)
from transcripts import assert_valid_transcript, transcript_problems  # noqa: E402

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
# Children run in parallel; two cores on CI: a few at a time keep both busy without thrashing.
WORKERS = max(2, min(4, (os.cpu_count() or 2) + 1))


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
    """The spec's resume semantics (checkpoints.md "Resume semantics" + issue 3 gate rules)."""
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


# -- one crash point ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CrashPoint:
    kind: str  # "write" | "tool"
    k: int = 0
    when: str = ""
    tool_use_id: str = ""
    label: str = ""  # what the write is, from the calibration log

    @property
    def case_id(self) -> str:
        if self.kind == "write":
            return f"w{self.k:02d}-{self.when}"
        return f"tool-{self.tool_use_id}"

    def crash_arg(self) -> dict[str, Any]:
        if self.kind == "write":
            return {"kind": "write", "k": self.k, "when": self.when}
        return {"kind": "tool", "tool_use_id": self.tool_use_id}


@dataclass
class Violation:
    tag: str  # short, stable category (used to recognise known SDK bugs)
    detail: str


@dataclass
class CaseResult:
    point: CrashPoint
    violations: list[Violation]
    expectation: Expectation | None = None
    completed_rerun: tuple[
        str, ...
    ] = ()  # tools that finished but whose result was not durable, re-run
    # The crash fell between the durable final answer and the `completed` bookmark (the window
    # of a fixed finalize bug, asserted like every other point; see test_crash_regressions.py).
    finalize_window: bool = False


@dataclass
class Calibration:
    writes: list[dict[str, Any]]
    final: Session


def describe_write(w: dict[str, Any]) -> str:
    name = w["key"].rsplit("/", 1)[-1]
    extra = ""
    if "bookmark" in w:
        b = w["bookmark"]
        extra = f"[{b['position']},{b['execution_status']},n={b['message_count']}]"
    return f"{w['op']} {name}{extra}"


class Matrix:
    """All crash points of one (backend, position) configuration."""

    def __init__(
        self,
        store: Store,
        position: str,
        workdir: Path,
        env: dict[str, str],
        recovery: str = "reissue",
    ) -> None:
        self.store = store
        self.position = position
        self.workdir = workdir
        self.env = env
        # "reissue": the recovery process re-issues the crashed invocation with its invocation id
        # (what the serverless runtime does for the first slice). "bare": when the crashed
        # invocation's input is already durable, recover with `agent()` (no prompt), as the
        # runtime does for later slices and the spec allows ("agent() with no prompt resumes").
        assert recovery in ("reissue", "bare")
        self.recovery = recovery
        self.run_tag = uuid.uuid4().hex[:8]

    # -- plumbing --

    def _args(self, case_id: str, mode: str, crash: dict[str, Any] | None = None) -> dict[str, Any]:
        case_dir = self.workdir / case_id
        case_dir.mkdir(parents=True, exist_ok=True)
        return {
            **self.store.child_args(case_id),
            "session_id": f"{self.position}-{case_id}-{self.run_tag}",
            "agent_id": AGENT_ID,
            "position": self.position,
            "ledger": str(case_dir / "ledger.txt"),
            "writes": str(case_dir / f"writes-{mode}.log"),
            "progress": str(case_dir / f"progress-{mode}.log"),
            "mode": mode,
            "crash": crash,
        }

    def calibrate(self) -> Calibration:
        args = self._args("calibration", "run")
        run = run_child(args, self.env)
        assert run.returncode == 0, f"calibration child failed: {run.stderr}"
        writes = read_jsonl(Path(args["writes"]))
        final = Session.parse(args["session_id"], self.store.snapshot(args["session_id"]))
        assert_valid_transcript(final.messages)
        assert final.bookmark is not None and final.bookmark["execution_status"] == "completed", (
            final.bookmark
        )
        # Bookmark last: every bookmark counts exactly the messages created before it.
        created: set[str] = set()
        for w in writes:
            if "/messages/" in w["key"]:
                created.add(w["key"])
            if "bookmark" in w:
                assert w["bookmark"]["message_count"] == len(created), (
                    f"bookmark before its messages: {writes}"
                )
        return Calibration(writes=writes, final=final)

    def points(self, calibration: Calibration) -> list[CrashPoint]:
        pts = [
            CrashPoint("write", k=w["n"], when=when, label=describe_write(w))
            for w in calibration.writes
            for when in ("before", "after")
        ]
        pts += [
            CrashPoint("tool", tool_use_id=t, label=f"inside tool {t}") for t in child.ALL_TOOL_IDS
        ]
        return pts

    def run_all(
        self, points: Iterable[CrashPoint], calibration: Calibration, workers: int
    ) -> list[CaseResult]:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda p: self.run_point(p, calibration), points))

    # -- one point --

    def run_point(self, point: CrashPoint, calibration: Calibration) -> CaseResult:
        v: list[Violation] = []
        crash_args = self._args(point.case_id, "run", point.crash_arg())
        crashed = run_child(crash_args, self.env)
        if crashed.timed_out:
            return CaseResult(
                point, [Violation("child-error", f"crash child hung: {crashed.stderr[-2000:]}")]
            )
        if crashed.returncode == 0:
            return CaseResult(
                point,
                [
                    Violation(
                        "no-crash", f"child was not killed at {point} ({crashed.stderr[-500:]})"
                    )
                ],
            )
        expected_rc = -9 if point.kind == "tool" else child.CRASH_EXIT
        if crashed.returncode != expected_rc:
            return CaseResult(
                point,
                [
                    Violation(
                        "child-error",
                        f"rc={crashed.returncode} (wanted {expected_rc}): {crashed.stderr[-2000:]}",
                    )
                ],
            )
        if point.kind == "tool":
            started = [
                e
                for e in read_ledger(Path(crash_args["ledger"]))
                if e.tool_use_id == point.tool_use_id
            ]
            if [(e.event, e.pid) for e in started] != [("start", crashed.pid)]:
                return CaseResult(
                    point,
                    [Violation("child-error", f"not killed inside {point.tool_use_id}: {started}")],
                )
        session_id = crash_args["session_id"]
        at_crash = Session.parse(session_id, self.store.snapshot(session_id))
        progress = read_jsonl(Path(crash_args["progress"]))
        begun = [e["step"] for e in progress if e["event"] == "begin"]
        ended = [e["step"] for e in progress if e["event"] == "end"]
        start_step = next((s for s in begun if s not in ended), max(ended, default=0) + 1)
        if start_step > len(child.STEPS):
            v.append(Violation("child-error", "crash child finished every step yet was killed"))
            start_step = len(child.STEPS)

        # The stored state right after the crash must already be consistent.
        if at_crash.message_indices != list(range(len(at_crash.message_indices))):
            v.append(
                Violation(
                    "gap", f"message files not contiguous after crash: {at_crash.message_indices}"
                )
            )
        prefix_problems = [
            p for p in transcript_problems(at_crash.messages) if "trailing toolUse" not in p
        ]
        if at_crash.messages and prefix_problems:
            v.append(Violation("invalid-at-crash", "; ".join(prefix_problems)))
        expectation = expect(at_crash)

        v += self.order_checks(point, at_crash, expectation, calibration)

        recover_args = self._args(point.case_id, "recover")
        recover_args["start_step"] = start_step
        step_input = child.STEPS[start_step]["prompt"]
        if self.recovery == "bare" and any(
            step_input in texts(m) for m in at_crash.messages if m["role"] == "user"
        ):
            recover_args["steps"] = [
                {"prompt": None, "pause": child.STEPS[start_step]["pause"]}
            ] + list(range(start_step + 1, len(child.STEPS) + 1))
        recovered = run_child(recover_args, self.env)
        if recovered.returncode != 0 or recovered.timed_out:
            v.append(
                Violation(
                    "recover-failed", f"rc={recovered.returncode}: {recovered.stderr[-3000:]}"
                )
            )
            return CaseResult(point, v, expectation)
        final = Session.parse(session_id, self.store.snapshot(session_id))
        rec_progress = read_jsonl(Path(recover_args["progress"]))
        ledger = read_ledger(Path(crash_args["ledger"]))
        v += self.judge(
            point,
            calibration,
            at_crash,
            final,
            expectation,
            rec_progress,
            ledger,
            crashed.pid,
            recovered.pid,
        )
        completed_rerun = tuple(
            t
            for t in expectation.pending
            if any(
                e.event == "done" and e.tool_use_id == t and e.pid == crashed.pid for e in ledger
            )
        )
        return CaseResult(point, v, expectation, completed_rerun, in_finalize_window(at_crash))

    # -- the assertions, per crash point --

    def order_checks(
        self, point: CrashPoint, at_crash: Session, exp: Expectation, calibration: Calibration
    ) -> list[Violation]:
        """Spec-level consequences of "messages first, bookmark last" for this crash point."""
        v: list[Violation] = []
        saves_after_model = self.position in ("after_model", "both")
        if point.kind == "tool":
            # The tool started, so its toolUse message and (if configured) its after_model
            # bookmark were durable: a rebuilt agent must run it again, else report it interrupted.
            if saves_after_model and (
                exp.position != "after_model" or point.tool_use_id not in exp.pending
            ):
                v.append(
                    Violation(
                        "bookmark-order",
                        f"killed inside {point.tool_use_id} with {self.position!r}, but {exp}",
                    )
                )
            if not saves_after_model and point.tool_use_id not in exp.interrupted:
                v.append(
                    Violation(
                        "bookmark-order",
                        f"killed inside {point.tool_use_id} with after_tools, but {exp}",
                    )
                )
        elif point.when == "after":
            write = calibration.writes[point.k - 1]
            bookmark = write.get("bookmark")
            if (
                bookmark
                and bookmark["execution_status"] == "active"
                and exp.position != bookmark["position"]
            ):
                v.append(
                    Violation("bookmark-order", f"killed right after writing {bookmark}, but {exp}")
                )
        return v

    def judge(
        self,
        point: CrashPoint,
        calibration: Calibration,
        at_crash: Session,
        final: Session,
        exp: Expectation,
        rec_progress: list[dict[str, Any]],
        ledger: list[LedgerEntry],
        crash_pid: int,
        recover_pid: int,
    ) -> list[Violation]:
        v: list[Violation] = []
        msgs = final.messages

        # 1. Message files contiguous, numbered as named, same count as an uncrashed run.
        if final.message_indices != list(range(len(final.message_indices))):
            v.append(Violation("gap", f"message files not contiguous: {final.message_indices}"))
        for i, rec in zip(final.message_indices, final.records, strict=True):
            if rec.get("message_id") != i:
                v.append(
                    Violation("gap", f"message_{i}.json says message_id={rec.get('message_id')}")
                )
        if len(msgs) != len(calibration.final.messages):
            v.append(
                Violation(
                    "message-count",
                    f"{len(msgs)} messages stored, an uncrashed run stores {len(calibration.final.messages)}",
                )
            )

        # 2. A valid Converse transcript.
        for problem in transcript_problems(msgs):
            v.append(Violation("invalid-transcript", problem))

        # 3. Nothing lost, nothing duplicated.
        assistant = [m for m in msgs if m["role"] == "assistant"]
        want_assistant = [m for m in calibration.final.messages if m["role"] == "assistant"]
        if assistant != want_assistant:
            v.append(
                Violation(
                    "assistant-messages",
                    f"assistant messages differ from an uncrashed run: {assistant}",
                )
            )
        user_texts = [t for m in msgs if m["role"] == "user" for t in texts(m)]
        for prompt in (child.PROMPT, child.CONTINUE):
            if user_texts.count(prompt) != 1:
                v.append(
                    Violation(
                        "prompt-count",
                        f"user text {prompt!r} stored {user_texts.count(prompt)} times",
                    )
                )
        extra = [t for t in user_texts if t not in (child.PROMPT, child.CONTINUE)]
        if extra:
            v.append(Violation("prompt-count", f"unexpected user texts {extra}"))
        for i, (before, after) in enumerate(zip(at_crash.messages, msgs, strict=False)):
            last = i == len(at_crash.messages) - 1
            if before != after and not (
                last
                and before["role"] == after["role"]
                and after["content"][: len(before["content"])] == before["content"]
            ):
                v.append(
                    Violation(
                        "rewritten", f"message {i} changed after the crash: {before} -> {after}"
                    )
                )
        if len(msgs) < len(at_crash.messages):
            v.append(
                Violation(
                    "lost", f"{len(at_crash.messages)} messages before recovery, {len(msgs)} after"
                )
            )

        # 4. Bookmark: exact schema, finalized as completed, counting the stored messages.
        b = final.bookmark
        if b is None:
            v.append(Violation("finalize", "no checkpoint.json after a completed turn"))
        else:
            if set(b) != CHECKPOINT_FIELDS:
                v.append(Violation("bookmark-schema", f"checkpoint.json fields {sorted(b)}"))
            saved = ("after_model", "after_tools") if self.position == "both" else (self.position,)
            if b.get("position") not in saved:
                v.append(
                    Violation(
                        "bookmark-schema",
                        f"bookmark position {b.get('position')!r} with config {self.position!r}",
                    )
                )
            if b.get("schema_version") != "1.0" or b.get("agent_id") != AGENT_ID:
                v.append(Violation("bookmark-schema", f"bookmark {b}"))
            if not ISO_UTC.match(str(b.get("created_at"))):
                v.append(
                    Violation(
                        "bookmark-schema", f"created_at {b.get('created_at')!r} is not ISO-8601 UTC"
                    )
                )
            if not isinstance(b.get("cycle_index"), int) or b["cycle_index"] < 0:
                v.append(Violation("bookmark-schema", f"cycle_index {b.get('cycle_index')!r}"))
            if b.get("execution_status") != "completed":
                v.append(
                    Violation(
                        "finalize",
                        f"bookmark left {b.get('execution_status')!r} after the turn completed: {b}",
                    )
                )
            if b.get("message_count") != len(msgs):
                v.append(
                    Violation(
                        "finalize",
                        f"bookmark message_count={b.get('message_count')} but {len(msgs)} messages stored",
                    )
                )
        if final.agent is None:
            v.append(Violation("agent-json", "no agent.json"))
        else:
            ids = final.agent.get("invocation_ids", [])
            for inv in ("inv-1", "inv-2"):
                if inv not in ids:
                    v.append(
                        Violation("agent-json", f"agent.json invocation_ids {ids} lacks {inv}")
                    )

        # 5. The first recovery invocation did what the spec's resume rules say.
        first_end = next((e for e in rec_progress if e["event"] == "end"), None)
        first_warnings: list[str] = []
        for e in rec_progress:
            if e["event"] == "end":
                break
            if e["event"] == "warning":
                first_warnings.append(e["msg"])
        last_end = [e for e in rec_progress if e["event"] == "end"][-1:]
        if (
            not last_end
            or last_end[0]["stop_reason"] != "end_turn"
            or last_end[0]["text"] != child.FINAL_TEXT
        ):
            v.append(Violation("not-finished", f"recovery did not finish the job: {last_end}"))
        if first_end is not None:
            acted = (first_end["resumed_from_checkpoint"], first_end["resume_position"])
            wanted = (exp.position is not None, exp.position)
            if acted != wanted:
                v.append(
                    Violation(
                        "resume-flags",
                        f"first recovery invoke acted on {acted}, spec says {wanted}",
                    )
                )
        denied = any(DENY_WARNING in w for w in first_warnings)
        if denied != exp.deny_warning:
            v.append(
                Violation(
                    "deny-warning",
                    f"gate-deny warning logged={denied}, expected={exp.deny_warning}: {first_warnings}",
                )
            )
        repaired = any(ORPHAN_WARNING in w for w in first_warnings)
        if repaired != bool(exp.interrupted):
            v.append(
                Violation(
                    "orphan-warning",
                    f"orphan warning logged={repaired}, expected for {exp.interrupted}",
                )
            )

        # 6. Tools: each toolUse answered once; re-run at most once, and only when its result was
        #    not durable and an after_model bookmark said it was pending.
        final_results = {r["toolUseId"]: r for m in msgs for r in results(m)}
        durable_at_crash = {r["toolUseId"] for m in at_crash.messages for r in results(m)}
        used_at_crash = {u["toolUseId"] for m in at_crash.messages for u in uses(m)}
        for t in child.ALL_TOOL_IDS:
            runs = [e for e in ledger if e.tool_use_id == t]
            starts_crash = [e for e in runs if e.event == "start" and e.pid == crash_pid]
            starts_rec = [e for e in runs if e.event == "start" and e.pid == recover_pid]
            dones_rec = [e for e in runs if e.event == "done" and e.pid == recover_pid]
            keys = {e.key for e in runs}
            result = final_results.get(t)
            if result is None:
                v.append(Violation("tool-unanswered", f"{t} has no toolResult"))
                continue
            interrupted = result.get("status") == "error" and INTERRUPTED_MARK in result_text(
                result
            )
            if len(keys) > 1:
                v.append(
                    Violation("idempotency-key", f"{t} ran with different idempotency keys {keys}")
                )
            if len(starts_crash) > 1 or len(starts_rec) > 1:
                v.append(
                    Violation(
                        "tool-rerun",
                        f"{t} started {len(starts_crash)}x before and {len(starts_rec)}x after the crash",
                    )
                )
            if t not in used_at_crash and starts_crash:
                v.append(
                    Violation(
                        "tool-before-durable", f"{t} ran before its toolUse message was stored"
                    )
                )
            if t in durable_at_crash:
                if starts_rec:
                    v.append(
                        Violation(
                            "tool-rerun", f"{t} re-ran although its result was already stored"
                        )
                    )
            elif t in exp.pending:
                if len(starts_rec) != 1 or len(dones_rec) != 1 or interrupted:
                    v.append(
                        Violation(
                            "pending-not-run",
                            f"{t} was pending under an after_model bookmark but recovery ran it {len(starts_rec)}x "
                            f"(result {result})",
                        )
                    )
            elif t in exp.interrupted:
                if starts_rec:
                    v.append(
                        Violation(
                            "tool-rerun", f"{t} re-ran although no after_model bookmark covered it"
                        )
                    )
                if not interrupted:
                    v.append(
                        Violation(
                            "not-interrupted",
                            f"orphan {t} was not answered 'interrupted': {result}",
                        )
                    )
            elif t not in used_at_crash and (
                len(starts_rec) != 1 or len(dones_rec) != 1 or interrupted
            ):
                v.append(
                    Violation(
                        "tool-missing",
                        f"{t} (asked after recovery) ran {len(starts_rec)}x: {result}",
                    )
                )
            if interrupted and t not in exp.interrupted:
                v.append(
                    Violation(
                        "not-interrupted",
                        f"{t} answered 'interrupted' but the spec says it runs: {result}",
                    )
                )
        return v


def in_finalize_window(at_crash: Session) -> bool:
    """Whether the crash fell after the final assistant text was durable but before the
    `completed` bookmark: recovery must finalize without asking the model again."""
    msgs = at_crash.messages
    return (
        bool(msgs)
        and msgs[-1]["role"] == "assistant"
        and not uses(msgs[-1])
        and (at_crash.bookmark is None or at_crash.bookmark["execution_status"] != "completed")
    )


def format_failures(results: list[CaseResult]) -> str:
    """Every violation of every crash point, grouped by point, for an assertion message."""
    lines = []
    for r in results:
        if r.violations:
            lines.append(f"{r.point.case_id} ({r.point.label}):")
            lines += [f"    [{x.tag}] {x.detail}" for x in r.violations]
    return "\n".join(lines)
