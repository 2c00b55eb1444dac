"""Crash matrix with real processes.

A child process runs a tool-heavy scripted agent (three tool cycles, one with two concurrent
tools, a pause and a second invocation that merges its text into a toolResult message) and is
killed with `os._exit` before and after every storage write it makes, and with SIGKILL inside
every tool. A second process rebuilds the agent with the same ids and re-issues the interrupted
invocation with the same `invocation_id`. For every point the parent checks, from the raw
stored files/objects:

- message files contiguous, none lost, none duplicated, none rewritten (except a merge into the
  last one), the same assistant turns as an uncrashed run, each prompt stored exactly once;
- a valid Converse transcript;
- the bookmark: exact schema, `completed` with the right `message_count` at the end, and the
  first recovery invocation acting exactly as the spec's resume rules say for the state that
  was durable at the crash (resume flags, gate-deny warning, orphan repair);
- tools: a tool whose result was durable never re-runs; a tool pending under an allowed
  after_model bookmark runs exactly once more (same idempotency key); an orphan without one is
  answered "interrupted" and not run; no tool runs before its toolUse is durable.

The full matrix (every write x before/after, every tool, 3 positions x File/S3) is `slow`; a
smoke subset of semantically chosen points runs unmarked.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.system.crash import crash_harness as h


def run_matrix(
    backend: str,
    position: str,
    make_store: Callable[[str], h.Store],
    make_env: Callable[[str], dict[str, str]],
    tmp_path: Path,
    select: Callable[[h.CrashPoint], bool] | None = None,
    recovery: str = "reissue",
) -> list[h.CaseResult]:
    matrix = h.Matrix(
        make_store(backend), position, tmp_path / "work", make_env(backend), recovery=recovery
    )
    calibration = matrix.calibrate()
    points = [p for p in matrix.points(calibration) if select is None or select(p)]
    assert points, "no crash point selected"
    results = matrix.run_all(points, calibration, workers=h.WORKERS)
    failures = h.format_failures(results)
    assert not failures, f"{backend}/{position}: crash points that broke the contract:\n{failures}"
    return results


def summary(results: list[h.CaseResult]) -> dict[str, int]:
    exps = [r.expectation for r in results if r.expectation is not None]
    return {
        "points": len(results),
        "resumed_after_model": sum(e.position == "after_model" for e in exps),
        "resumed_after_tools": sum(e.position == "after_tools" for e in exps),
        "gate_denied": sum(e.deny_warning for e in exps),
        "orphans_interrupted": sum(bool(e.interrupted) for e in exps),
        "completed_tool_rerun": sum(bool(r.completed_rerun) for r in results),
        "finalize_window": sum(r.finalize_window for r in results),
    }


# -- full matrix --------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("backend", ["file", "s3"])
@pytest.mark.parametrize("position", h.POSITIONS)
def test_crash_matrix(backend: str, position: str, make_store, make_env, tmp_path: Path) -> None:
    results = run_matrix(backend, position, make_store, make_env, tmp_path)
    stats = summary(results)
    print(f"\ncrash matrix {backend}/{position}: {stats}")
    # Every kind of write was hit: session.json, agent.json (create and replace), message
    # create, message merge (replace), bookmark writes and the final `completed` bookmark.
    labels = {r.point.label.split("[")[0] for r in results}
    assert {
        "create session.json",
        "replace agent.json",
        "replace message_2.json",
        "replace checkpoint.json",
    } <= labels
    if position != "after_tools":
        assert stats["resumed_after_model"] > 0
    if position != "after_model":
        assert stats["resumed_after_tools"] > 0
    assert stats["orphans_interrupted"] > 0 and stats["gate_denied"] > 0
    # The once-buggy window (final answer durable, bookmark not yet completed) is exercised.
    assert stats["finalize_window"] > 0


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_crash_matrix_bare_recovery(make_store, make_env, tmp_path: Path) -> None:
    """Same matrix, recovering with `agent()` (no prompt) once the crashed input is durable, as
    the serverless runtime's later slices do (they run with position="both")."""
    results = run_matrix("file", "both", make_store, make_env, tmp_path, recovery="bare")
    print(f"\nbare-recovery matrix file/both: {summary(results)}")


# -- smoke subset (unmarked) ----------------------------------------------------------------------


def smoke_points(point: h.CrashPoint) -> bool:
    """A handful of points that cover each kind of recovery path."""
    if point.kind == "tool":
        return point.tool_use_id in ("t0", "t1b")
    return (point.label, point.when) in {
        ("replace agent.json", "before"),
        ("create message_1.json", "after"),  # orphan toolUse, no bookmark yet
        ("replace checkpoint.json[after_model,active,n=4]", "after"),  # pending pair re-run
        ("replace message_2.json", "before"),  # merge of the second prompt
        ("replace message_2.json", "after"),
        ("create message_7.json", "before"),  # final text lost: model asked again
    }


def test_crash_smoke_file_both(make_store, make_env, tmp_path: Path) -> None:
    results = run_matrix("file", "both", make_store, make_env, tmp_path, select=smoke_points)
    assert len(results) >= 8
    exps = {r.point.case_id: r.expectation for r in results}
    assert exps["tool-t1b"] is not None and exps["tool-t1b"].pending == ("t1a", "t1b")


def test_crash_smoke_s3_after_model(make_store, make_env, tmp_path: Path) -> None:
    results = run_matrix(
        "s3",
        "after_model",
        make_store,
        make_env,
        tmp_path,
        select=lambda p: (
            p.kind == "tool"
            and p.tool_use_id == "t2"
            or (
                p.label.startswith("replace checkpoint.json[after_model,active")
                and p.when == "after"
            )
        ),
    )
    assert all(
        r.expectation is not None and r.expectation.position == "after_model" for r in results
    )
