"""Unbounded jobs: before the 25,000-event cap a job continues in a new execution.

moto executes the synthesized definition with a lowered ``slicesPerExecution`` (2), so a
job of 7 slices spans 4 executions; the jobs API's chain logic (elsai.serverless.executions)
reports one job across them. The history-event cost per slice that ``elsai/cdk/config.py``
budgets with is measured here on the same definition.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from elsai.cdk.config import (
    EVENTS_PER_INTERRUPT_ROUND,
    EVENTS_PER_RETRY,
    EVENTS_PER_SLICE,
    ElsaiConfig,
)
from elsai.serverless import executions
from infra.synth import synth_template
from tests.unit.cdk.asl_harness import FunctionError, Harness, running

CONTINUATION_CONTEXT = {"slicesPerExecution": 2, "maxSlices": 20}


@pytest.fixture(scope="module")
def continuation_template() -> dict[str, Any]:
    return synth_template(CONTINUATION_CONTEXT)


@pytest.fixture
def harness(
    continuation_template: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Harness]:
    with running(continuation_template, monkeypatch) as h:
        yield h


def _job_id(arn: str) -> str:
    return arn.rsplit(":", 1)[1]


def _finished(h: Harness, job_id: str) -> executions.JobChain:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        chain = executions.follow_job(h.sfn, h.machine_arn, job_id)
        if chain.current["status"] != "RUNNING":
            return chain
        time.sleep(0.05)
    raise AssertionError("job did not finish in 60 s")


def test_a_job_spans_four_executions_and_reports_as_one(harness: Harness) -> None:
    statuses = iter(["continue"] * 6 + ["completed"])
    harness.script = lambda e: {"status": next(statuses), "text": "done", "model_calls": 2}
    job_id = _job_id(harness.start())
    chain = _finished(harness, job_id)

    assert chain.executions == 4
    view = executions.job_view(job_id, chain)
    assert view["status"] == "SUCCEEDED" and view["executions"] == 4
    assert view["result"]["text"] == "done"
    assert (view["session_id"], view["agent_id"]) == ("s1", "a1")
    slices = harness.run_slices()
    # Same job id and session in every execution; the slice counter runs on across them.
    assert [c["slice"] for c in slices] == [0, 1, 2, 3, 4, 5, 6]
    assert {(c["job_id"], c["session_id"], c["agent_id"]) for c in slices} == {(job_id, "s1", "a1")}
    names = [c["execution_id"].rsplit(":", 1)[1] for c in slices]
    assert names == [job_id] * 2 + [f"{job_id}-c1"] * 2 + [f"{job_id}-c2"] * 2 + [f"{job_id}-c3"]
    assert slices[0]["prompt"] == "hi" and all(c["prompt"] is None for c in slices[1:])
    first = harness.sfn.describe_execution(executionArn=chain.first["executionArn"])
    assert json.loads(first["output"]) == {
        "status": "continued", "job_id": job_id, "continued_in": f"{job_id}-c1", "slice": 2,
    }  # fmt: skip


def test_budgets_count_across_executions(harness: Harness) -> None:
    harness.script = lambda e: {"status": "continue"}
    job_id = _job_id(harness.start())
    chain = _finished(harness, job_id)
    assert chain.executions == 10  # 20 slices, 2 per execution
    assert (chain.current["status"], chain.current["error"]) == ("FAILED", "SliceBudgetExhausted")
    view = executions.job_view(job_id, chain)
    assert (
        view["error"]["error"] == "SliceBudgetExhausted" and "20 slices" in view["error"]["cause"]
    )
    assert len(harness.run_slices()) == 20


def test_answers_given_before_a_continuation_reach_the_next_execution(harness: Harness) -> None:
    statuses = iter(["continue", "interrupted", "completed"])
    harness.script = lambda e: {"status": next(statuses), "interrupts": [{"id": "i1"}]}
    arn = harness.start()
    harness.wait(arn, until=lambda: bool(harness.parked))
    token = harness.parked[0]["task_token"]
    assert executions.waiting_on_token(harness.sfn, arn, token)
    assert not executions.waiting_on_token(harness.sfn, arn, token[:-4])  # whole token only
    harness.sfn.send_task_success(
        taskToken=token, output=json.dumps({"interrupt_responses": [{"ok": True}]})
    )
    chain = _finished(harness, _job_id(arn))
    assert chain.executions == 2 and chain.current["status"] == "SUCCEEDED"
    last = harness.run_slices()[-1]
    assert last["slice"] == 2 and last["interrupt_responses"] == [{"ok": True}]
    assert last["execution_id"].endswith("-c1")


def _events(h: Harness, arn: str) -> int:
    pages = h.sfn.get_paginator("get_execution_history").paginate(executionArn=arn)
    return sum(len(p["events"]) for p in pages)


def test_history_cost_per_slice_matches_the_budget(
    template_dict: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    with running(template_dict, monkeypatch) as h:
        runs = {}
        for slices in (1, 4):
            statuses = iter(["continue"] * (slices - 1) + ["completed"])
            h.script = lambda e, s=statuses: {"status": next(s)}
            arn = h.start()
            h.wait(arn)
            runs[slices] = _events(h, arn)
        per_slice = (runs[4] - runs[1]) / 3
        assert per_slice <= EVENTS_PER_SLICE

        failures = ["Lambda.Unknown"]

        def once_failing(event: dict[str, Any]) -> dict[str, Any]:
            if failures:
                raise FunctionError(failures.pop())
            return {"status": "completed"}

        h.script = once_failing
        arn = h.start()
        h.wait(arn)
        assert _events(h, arn) - runs[1] <= EVENTS_PER_RETRY

        statuses = iter(["interrupted", "completed"])
        h.script = lambda e: {"status": next(statuses), "interrupts": []}
        arn = h.start()
        h.wait(arn, until=lambda: bool(h.parked))
        h.sfn.send_task_success(
            taskToken=h.parked[-1]["task_token"], output=json.dumps({"interrupt_responses": []})
        )
        h.wait(arn)
        # one more slice plus the round itself
        assert _events(h, arn) - runs[1] <= EVENTS_PER_SLICE + EVENTS_PER_INTERRUPT_ROUND


def test_slices_per_execution_is_validated_against_the_event_cap() -> None:
    config = ElsaiConfig()
    assert config.execution_slices == config.max_safe_slices_per_execution
    assert config.execution_slices * config.worst_events_per_slice <= 25_000
    with pytest.raises(ValueError, match="slicesPerExecution must be 1..255"):
        ElsaiConfig(slices_per_execution=1000)
    with pytest.raises(ValueError, match="maxSlices must be <= 200"):
        ElsaiConfig(slices_per_execution=2, max_slices=201)
