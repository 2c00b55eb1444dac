"""The verdict on one recovered crash point: what the stored state after recovery must show.

Each check reads the raw stored files (`Session`), the tool ledger and the recovery child's
progress log, and returns `Violation`s; `judge` runs them all. The expected behaviour comes
from the spec's rules applied to what was durable at the crash (`Expectation`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.support.transcripts import transcript_problems
from tests.system.crash import child_agent as child
from tests.system.crash.crash_store import (
    AGENT_ID,
    CHECKPOINT_FIELDS,
    DENY_WARNING,
    INTERRUPTED_MARK,
    ISO_UTC,
    ORPHAN_WARNING,
    Calibration,
    Expectation,
    LedgerEntry,
    Session,
    Violation,
    result_text,
    results,
    texts,
    uses,
)


@dataclass(frozen=True)
class Recovery:
    """Everything known about one crash point once the recovery child has finished."""

    position: str  # the checkpoint position the children were configured with
    calibration: Calibration  # the uncrashed run
    at_crash: Session  # what was durable when the child died
    final: Session  # what is stored after recovery
    exp: Expectation  # what the spec says the first recovery invocation does
    rec_progress: list[dict[str, Any]]  # the recovery child's progress log
    ledger: list[LedgerEntry]  # every tool start/done, from both children
    crash_pid: int
    recover_pid: int


def judge(r: Recovery) -> list[Violation]:
    """Every way the recovered store breaks the contract (an empty list: it holds)."""
    return [
        *_files(r),
        *_transcript(r),
        *_nothing_lost(r),
        *_bookmark(r),
        *_first_recovery(r),
        *_tools(r),
    ]


def _files(r: Recovery) -> list[Violation]:
    v: list[Violation] = []
    final, calibration, msgs = r.final, r.calibration, r.final.messages
    # 1. Message files contiguous, numbered as named, same count as an uncrashed run.
    if final.message_indices != list(range(len(final.message_indices))):
        v.append(Violation("gap", f"message files not contiguous: {final.message_indices}"))
    for i, rec in zip(final.message_indices, final.records, strict=True):
        if rec.get("message_id") != i:
            v.append(Violation("gap", f"message_{i}.json says message_id={rec.get('message_id')}"))
    if len(msgs) != len(calibration.final.messages):
        v.append(
            Violation(
                "message-count",
                f"{len(msgs)} messages stored, an uncrashed run stores {len(calibration.final.messages)}",
            )
        )

    return v


def _transcript(r: Recovery) -> list[Violation]:
    v: list[Violation] = []
    msgs = r.final.messages
    # 2. A valid Converse transcript.
    for problem in transcript_problems(msgs):
        v.append(Violation("invalid-transcript", problem))

    return v


def _nothing_lost(r: Recovery) -> list[Violation]:
    v: list[Violation] = []
    at_crash, calibration, msgs = r.at_crash, r.calibration, r.final.messages
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
                Violation("rewritten", f"message {i} changed after the crash: {before} -> {after}")
            )
    if len(msgs) < len(at_crash.messages):
        v.append(
            Violation(
                "lost", f"{len(at_crash.messages)} messages before recovery, {len(msgs)} after"
            )
        )

    return v


def _bookmark(r: Recovery) -> list[Violation]:
    v: list[Violation] = []
    final, msgs = r.final, r.final.messages
    # 4. Bookmark: exact schema, finalized as completed, counting the stored messages.
    b = final.bookmark
    if b is None:
        v.append(Violation("finalize", "no checkpoint.json after a completed turn"))
    else:
        if set(b) != CHECKPOINT_FIELDS:
            v.append(Violation("bookmark-schema", f"checkpoint.json fields {sorted(b)}"))
        saved = ("after_model", "after_tools") if r.position == "both" else (r.position,)
        if b.get("position") not in saved:
            v.append(
                Violation(
                    "bookmark-schema",
                    f"bookmark position {b.get('position')!r} with config {r.position!r}",
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
                v.append(Violation("agent-json", f"agent.json invocation_ids {ids} lacks {inv}"))

    return v


def _first_recovery(r: Recovery) -> list[Violation]:
    v: list[Violation] = []
    rec_progress, exp = r.rec_progress, r.exp
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

    return v


@dataclass(frozen=True)
class _ToolFacts:
    """One tool id's runs (from the ledger) and its answer (from the final transcript)."""

    tool_use_id: str
    starts_crash: int  # starts in the crashed child
    starts_rec: int  # starts in the recovery child
    dones_rec: int  # completions in the recovery child
    keys: frozenset[str]  # idempotency keys it ran with
    result: dict[str, Any]
    interrupted: bool  # answered with the "interrupted" error instead of running


def _tools(r: Recovery) -> list[Violation]:
    """Each toolUse answered once; re-run at most once, and only when its result was not
    durable and an after_model bookmark said it was pending."""
    v: list[Violation] = []
    final_results = {res["toolUseId"]: res for m in r.final.messages for res in results(m)}
    durable_at_crash = {res["toolUseId"] for m in r.at_crash.messages for res in results(m)}
    used_at_crash = {u["toolUseId"] for m in r.at_crash.messages for u in uses(m)}
    for t in child.ALL_TOOL_IDS:
        result = final_results.get(t)
        if result is None:
            v.append(Violation("tool-unanswered", f"{t} has no toolResult"))
            continue
        facts = _facts(r, t, result)
        v += _run_counts(facts, used_at_crash)
        v += _reruns(r.exp, facts, durable_at_crash, used_at_crash)
    return v


def _facts(r: Recovery, t: str, result: dict[str, Any]) -> _ToolFacts:
    runs = [e for e in r.ledger if e.tool_use_id == t]
    return _ToolFacts(
        tool_use_id=t,
        starts_crash=sum(e.event == "start" and e.pid == r.crash_pid for e in runs),
        starts_rec=sum(e.event == "start" and e.pid == r.recover_pid for e in runs),
        dones_rec=sum(e.event == "done" and e.pid == r.recover_pid for e in runs),
        keys=frozenset(e.key for e in runs),
        result=result,
        interrupted=result.get("status") == "error" and INTERRUPTED_MARK in result_text(result),
    )


def _run_counts(f: _ToolFacts, used_at_crash: set[str]) -> list[Violation]:
    """One idempotency key, at most one start per process, none before the toolUse was stored."""
    t, v = f.tool_use_id, []
    if len(f.keys) > 1:
        v.append(
            Violation("idempotency-key", f"{t} ran with different idempotency keys {set(f.keys)}")
        )
    if f.starts_crash > 1 or f.starts_rec > 1:
        v.append(
            Violation(
                "tool-rerun",
                f"{t} started {f.starts_crash}x before and {f.starts_rec}x after the crash",
            )
        )
    if t not in used_at_crash and f.starts_crash:
        v.append(Violation("tool-before-durable", f"{t} ran before its toolUse message was stored"))
    return v


def _reruns(
    exp: Expectation, f: _ToolFacts, durable_at_crash: set[str], used_at_crash: set[str]
) -> list[Violation]:
    """Whether recovery ran the tool exactly when the spec's resume rules say it must."""
    t, result, v = f.tool_use_id, f.result, []
    ran_once = f.starts_rec == 1 and f.dones_rec == 1 and not f.interrupted
    if t in durable_at_crash:
        if f.starts_rec:
            v.append(Violation("tool-rerun", f"{t} re-ran although its result was already stored"))
    elif t in exp.pending:
        if not ran_once:
            v.append(
                Violation(
                    "pending-not-run",
                    f"{t} was pending under an after_model bookmark but recovery ran it "
                    f"{f.starts_rec}x (result {result})",
                )
            )
    elif t in exp.interrupted:
        if f.starts_rec:
            v.append(
                Violation("tool-rerun", f"{t} re-ran although no after_model bookmark covered it")
            )
        if not f.interrupted:
            v.append(
                Violation("not-interrupted", f"orphan {t} was not answered 'interrupted': {result}")
            )
    elif t not in used_at_crash and not ran_once:
        v.append(
            Violation("tool-missing", f"{t} (asked after recovery) ran {f.starts_rec}x: {result}")
        )
    if f.interrupted and t not in exp.interrupted:
        v.append(
            Violation(
                "not-interrupted", f"{t} answered 'interrupted' but the spec says it runs: {result}"
            )
        )
    return v
