"""Crash matrix of the interrupt-answer path, with real processes.

A child asks a person to approve a payment (the first invocation pauses with one interrupt),
then a second child answers it and is killed (os._exit) before and after every data write the
answer makes: the tool's result message, agent.json (the interrupt cleared), the bookmarks,
the final answer. Then the answer is retried twice, each time in a new process with the same
answers and the same invocation id (what a caller that saw no reply does). For every point:

- both retries succeed with the final answer, and the stored transcript is valid Converse;
- `elsai sessions check` finds nothing wrong (`check_session`, the function it runs);
- the tool's result is stored exactly once; the tool is run again only if its result was not
  durable at the crash, then with the same idempotency key and the same answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from elsai.session.inspect.check import check_session
from elsai.session.storage import FileStorage, S3Storage, StorageBackend
from tests.support.transcripts import assert_valid_transcript
from tests.system.crash import crash_harness as h
from tests.system.crash.crash_store import result_text

CHILD = Path(__file__).resolve().parent / "interrupt_answer_child.py"
AGENT_ID, FINAL_TEXT, CRASH_EXIT = "payer", "Invoice INV-1 handled.", 137


class Case:
    """One session: its child arguments, its ledger and the runs of its children."""

    def __init__(self, store: h.Store, env: dict[str, str], root: Path, name: str) -> None:
        self.store, self.env, self.dir = store, env, root / name
        self.dir.mkdir(parents=True)
        self.session_id = f"answer-{name}"
        self.base = {
            **store.child_args(name),
            "session_id": self.session_id,
            "ledger": str(self.dir / "ledger.txt"),
        }

    def run(self, mode: str, tag: str, **extra: Any) -> subprocess.CompletedProcess[str]:
        args = {**self.base, "mode": mode, "writes": str(self.dir / f"writes-{tag}.log"), **extra}
        return subprocess.run(
            [sys.executable, str(CHILD), json.dumps(args)],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def ask(self) -> str:
        asked = self.run("ask", "ask")
        assert asked.returncode == 0, asked.stderr
        out = json.loads(asked.stdout)
        assert out["stop_reason"] == "interrupt" and len(out["ids"]) == 1, out
        return str(out["ids"][0])

    def answer(self, interrupt_id: str, tag: str, crash: dict[str, Any] | None = None) -> Any:
        answers = [{"interruptId": interrupt_id, "response": "approve"}]
        return self.run("answer", tag, answers=answers, invocation_id="answer-1", crash=crash)

    def session(self) -> h.Session:
        return h.Session.parse(self.session_id, self.store.snapshot(self.session_id), AGENT_ID)

    def storage(self) -> StorageBackend:
        if isinstance(self.store, h.FileStore):
            return FileStorage(self.base["storage_dir"])
        return S3Storage(self.base["bucket"], prefix=self.base["prefix"])

    def paid(self) -> list[list[str]]:
        path = Path(self.base["ledger"])
        lines = path.read_text().splitlines() if path.exists() else []
        return [line.split() for line in lines if line.startswith("paid ")]


def _result_durable(session: h.Session) -> bool:
    return any(r["toolUseId"] == "pay-1" for m in session.messages for r in h.results(m))


def _run_point(case: Case, k: int, when: str) -> list[str]:
    """Crash the answer at write k (before/after), retry twice; what broke (empty: nothing)."""
    interrupt_id = case.ask()
    crashed = case.answer(interrupt_id, "crash", crash={"kind": "write", "k": k, "when": when})
    if crashed.returncode != CRASH_EXIT:
        return [f"crash child rc={crashed.returncode}: {crashed.stderr[-1500:]}"]
    durable_at_crash = _result_durable(case.session())
    problems = []
    for attempt in ("retry-1", "retry-2"):
        retried = case.answer(interrupt_id, attempt)
        if retried.returncode != 0:
            return [f"{attempt} failed: {retried.stderr[-1500:]}"]
        out = json.loads(retried.stdout)
        if out != {"stop_reason": "end_turn", "text": FINAL_TEXT}:
            problems.append(f"{attempt} returned {out}")
    final = case.session()
    try:
        assert_valid_transcript(final.messages, bookmark=final.bookmark)
    except AssertionError as exc:
        problems.append(str(exc))
    problems += [f"sessions check: {p}" for p in check_session(case.storage(), case.session_id)]
    results = [r for m in final.messages for r in h.results(m) if r["toolUseId"] == "pay-1"]
    if [result_text(r) for r in results] != ["INV-1: approve"]:
        problems.append(f"tool results stored: {results}")
    paid = case.paid()
    if len({p[1] for p in paid}) != 1 or any(p[2] != "approve" for p in paid):
        problems.append(f"payments: {paid}")
    if len(paid) != (1 if durable_at_crash else len(paid)) or len(paid) > 2:
        problems.append(f"tool re-run after its result was durable: {paid}")
    if final.bookmark is None or final.bookmark["execution_status"] != "completed":
        problems.append(f"bookmark not finalized: {final.bookmark}")
    return problems


def _matrix(store: h.Store, env: dict[str, str], root: Path, select: Any = None) -> int:
    calibration = Case(store, env, root, "calibration")
    assert calibration.answer(calibration.ask(), "run").returncode == 0
    writes = h.read_jsonl(calibration.dir / "writes-run.log")
    labels = [h.describe_write(w) for w in writes]
    assert labels[0].startswith("create message_2.json"), labels  # the tool's result first
    points = [(w["n"], when) for w in writes for when in ("before", "after")]
    points = [p for p in points if select is None or select(p, labels[p[0] - 1])]
    assert points

    def one(point: tuple[int, str]) -> tuple[str, list[str]]:
        k, when = point
        case = Case(store, env, root, f"w{k:02d}-{when}")
        return f"{when} write {k} ({labels[k - 1]})", _run_point(case, k, when)

    with ThreadPoolExecutor(max_workers=h.WORKERS) as pool:
        found = list(pool.map(one, points))
    failures = [f"{where}:\n    " + "\n    ".join(p) for where, p in found if p]
    assert not failures, "\n".join(failures)
    return len(points)


def test_every_write_of_the_answer_path_resumes_to_a_valid_transcript(
    make_store, make_env, tmp_path: Path
) -> None:
    count = _matrix(make_store("file"), make_env("file"), tmp_path)
    assert count >= 8  # result, agent.json, after_tools bookmark, final answer, completed


@pytest.mark.parametrize("backend", ["s3"])
def test_the_answer_path_on_s3(
    backend: str, make_store, make_env, s3_endpoint: str, tmp_path: Path
) -> None:
    def select(point: tuple[int, str], label: str) -> bool:
        return label.startswith(("create message_2.json", "replace agent.json"))

    _matrix(make_store(backend), make_env(backend), tmp_path, select)
