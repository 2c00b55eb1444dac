"""Parent side of the crash tests: spawn children, snapshot the store, judge each crash point.

The expected outcome of every crash point is derived from the spec's rules applied to what was
durable at the moment of the crash (the snapshot), not from a hand-written table. Reading the
store lives in `crash_store`, the verdict after recovery in `crash_judge`.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.transcripts import assert_valid_transcript, transcript_problems
from tests.system.crash import (
    child_agent as child,  # constants shared with the child: prompts, tool ids
)
from tests.system.crash.crash_judge import Recovery, judge
from tests.system.crash.crash_store import (  # noqa: F401  (re-exported: the tests use them as h.<name>)
    AGENT_ID,
    CHILD,
    POSITIONS,
    Calibration,
    ChildRun,
    Expectation,
    FileStore,
    S3Store,
    Session,
    Store,
    Violation,
    child_env,
    expect,
    read_jsonl,
    read_ledger,
    results,
    run_child,
    texts,
    uses,
)

# Children run in parallel; two cores on CI: a few at a time keep both busy without thrashing.
WORKERS = max(2, min(4, (os.cpu_count() or 2) + 1))


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
class CaseResult:
    point: CrashPoint
    violations: list[Violation]
    expectation: Expectation | None = None
    completed_rerun: tuple[
        str, ...
    ] = ()  # tools that finished but whose result was not durable, re-run
    # The crash fell between the durable final answer and the `completed` bookmark (the window
    # of a fixed finalize bug, asserted like every other point; see test_regressions.py).
    finalize_window: bool = False


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
        # Bookmark last: every bookmark counts exactly the messages created before it, but for
        # the model's reply, which may be written alongside an after_tools bookmark.
        created: list[str] = []
        for w in writes:
            if "/messages/" in w["key"] and w["op"] == "create":
                created.append(w["key"])
            if "bookmark" in w:
                count = w["bookmark"]["message_count"]
                passed = created[count:]
                assert count <= len(created) and len(passed) <= 1, (
                    f"bookmark before its messages: {writes}"
                )
                assert not passed or w["bookmark"]["position"] == "after_tools", writes
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
        crash_args = self._args(point.case_id, "run", point.crash_arg())
        crashed = run_child(crash_args, self.env)
        bad_crash = self._crash_problem(point, crashed, Path(crash_args["ledger"]))
        if bad_crash is not None:
            return CaseResult(point, [bad_crash])
        session_id = crash_args["session_id"]
        at_crash = Session.parse(session_id, self.store.snapshot(session_id))
        v, start_step = self._state_at_crash(at_crash, Path(crash_args["progress"]))
        expectation = expect(at_crash)
        crashed_write = next(
            (w for w in read_jsonl(Path(crash_args["writes"])) if "crash" in w), None
        )
        v += self.order_checks(point, at_crash, expectation, calibration, crashed_write)

        recover_args = self._recover_args(point, at_crash, start_step)
        recovered = run_child(recover_args, self.env)
        if recovered.returncode != 0 or recovered.timed_out:
            v.append(
                Violation(
                    "recover-failed", f"rc={recovered.returncode}: {recovered.stderr[-3000:]}"
                )
            )
            return CaseResult(point, v, expectation)
        ledger = read_ledger(Path(crash_args["ledger"]))
        v += judge(
            Recovery(
                position=self.position,
                calibration=calibration,
                at_crash=at_crash,
                final=Session.parse(session_id, self.store.snapshot(session_id)),
                exp=expectation,
                rec_progress=read_jsonl(Path(recover_args["progress"])),
                ledger=ledger,
                crash_pid=crashed.pid,
                recover_pid=recovered.pid,
            )
        )
        completed_rerun = tuple(
            t
            for t in expectation.pending
            if any(
                e.event == "done" and e.tool_use_id == t and e.pid == crashed.pid for e in ledger
            )
        )
        return CaseResult(point, v, expectation, completed_rerun, in_finalize_window(at_crash))

    def _crash_problem(
        self, point: CrashPoint, crashed: ChildRun, ledger: Path
    ) -> Violation | None:
        """Why the crash child did not die the way this point asks (None: it did)."""
        if crashed.timed_out:
            return Violation("child-error", f"crash child hung: {crashed.stderr[-2000:]}")
        if crashed.returncode == 0:
            return Violation(
                "no-crash", f"child was not killed at {point} ({crashed.stderr[-500:]})"
            )
        expected_rc = -9 if point.kind == "tool" else child.CRASH_EXIT
        if crashed.returncode != expected_rc:
            return Violation(
                "child-error",
                f"rc={crashed.returncode} (wanted {expected_rc}): {crashed.stderr[-2000:]}",
            )
        if point.kind == "tool":
            started = [e for e in read_ledger(ledger) if e.tool_use_id == point.tool_use_id]
            if [(e.event, e.pid) for e in started] != [("start", crashed.pid)]:
                return Violation("child-error", f"not killed inside {point.tool_use_id}: {started}")
        return None

    def _state_at_crash(self, at_crash: Session, progress: Path) -> tuple[list[Violation], int]:
        """Problems of the store right after the crash, and the step the crash interrupted."""
        v: list[Violation] = []
        entries = read_jsonl(progress)
        begun = [e["step"] for e in entries if e["event"] == "begin"]
        ended = [e["step"] for e in entries if e["event"] == "end"]
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
        return v, start_step

    def _recover_args(
        self, point: CrashPoint, at_crash: Session, start_step: int
    ) -> dict[str, Any]:
        """Arguments of the recovery child: redo the crashed step, then the rest."""
        recover_args = self._args(point.case_id, "recover")
        recover_args["start_step"] = start_step
        step_input = child.STEPS[start_step]["prompt"]
        if self.recovery == "bare" and any(
            step_input in texts(m) for m in at_crash.messages if m["role"] == "user"
        ):
            recover_args["steps"] = [
                {"prompt": None, "pause": child.STEPS[start_step]["pause"]}
            ] + list(range(start_step + 1, len(child.STEPS) + 1))
        return recover_args

    # -- the assertions, per crash point --

    def order_checks(
        self,
        point: CrashPoint,
        at_crash: Session,
        exp: Expectation,
        calibration: Calibration,
        crashed_write: dict[str, Any] | None = None,
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
            # The write this child died after (the reply and an after_tools bookmark may land
            # in either order, so the calibration run's k-th write may be the other one).
            write = crashed_write or calibration.writes[point.k - 1]
            bookmark = write.get("bookmark")
            # A reply written alongside an after_tools bookmark may have landed first: then the
            # bookmark is behind the stored messages and the gate must deny it.
            passed = bookmark is not None and bookmark["message_count"] < len(at_crash.messages)
            if passed and (bookmark["position"] != "after_tools" or not exp.deny_warning):
                v.append(Violation("bookmark-order", f"a message passed {bookmark}, but {exp}"))
            elif (
                bookmark
                and not passed
                and bookmark["execution_status"] == "active"
                and exp.position != bookmark["position"]
            ):
                v.append(
                    Violation("bookmark-order", f"killed right after writing {bookmark}, but {exp}")
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


def format_failures(case_results: list[CaseResult]) -> str:
    """Every violation of every crash point, grouped by point, for an assertion message."""
    lines = []
    for r in case_results:
        if r.violations:
            lines.append(f"{r.point.case_id} ({r.point.label}):")
            lines += [f"    [{x.tag}] {x.detail}" for x in r.violations]
    return "\n".join(lines)
