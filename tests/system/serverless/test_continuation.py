"""A single-agent job longer than slicesPerExecution continues in new executions on `elsai local`.

The local runtime runs the state machine synthesized with slicesPerExecution=2 and no test
patch of moto: the runtime itself makes moto's states:startExecution integration start the
next execution. Every slice stops at its first loop boundary, so 2 orders take 5 slices and
the job spans three executions of the same job; each order's tool runs once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from elsai.local import Fault, LocalRuntime
from elsai.local.faults import every_slice
from elsai.local.services import services_in_template
from elsai.local.template import load_service
from infra.synth import synth_template
from tests.system.local_stack import LocalStack

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def small_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    base = load_service(ROOT)
    (small,) = [
        s
        for s in services_in_template(synth_template({"slicesPerExecution": 2}), base.stack_name)
        if s.service_id == base.service_id
    ]
    service = dataclasses.replace(base, template=small.template)
    ledger = tmp_path_factory.mktemp("continuation") / "ledger.jsonl"
    runtime = LocalRuntime(project=ROOT, service=service, agent_factory="serverless_agents:build_agent",
                           fast_retries=True, pythonpath=(str(HERE),),
                           child_env={"AGENT_LEDGER": str(ledger)})  # fmt: skip
    with runtime:
        yield LocalStack(runtime, ledger)


def test_a_single_agent_job_continues_in_new_executions_and_succeeds(
    small_stack: LocalStack,
) -> None:
    rt = small_stack.rt
    rt.faults = every_slice(Fault(timeout_seconds=30))  # each slice stops at its first boundary
    job = rt.jobs.start("Process orders 1 and 2")
    final = rt.wait(job.job_id, timeout=120)

    assert final.status == "SUCCEEDED", final.error
    assert final.executions == 3
    records = rt.slices(job.job_id)
    assert [r.info.slice for r in records] == list(range(5))  # numbering carries across the chain
    assert [r.result["status"] for r in records if r.result] == ["continue"] * 4 + ["completed"]
    names = [
        e["name"]
        for e in rt.sfn.list_executions(stateMachineArn=rt.state_machine_arn)["executions"]
        if e["name"].startswith(job.job_id)
    ]
    assert sorted(names) == sorted([job.job_id, f"{job.job_id}-c1", f"{job.job_id}-c2"])
    assert small_stack.runs_per_order(job.session_id) == {"1": 1, "2": 1}
    assert final.result["text"] == "All 2 orders processed: 1, 2."
    _events_span_the_chain(small_stack, job.job_id)


def _events_span_the_chain(stack: LocalStack, job_id: str) -> None:
    whole = stack.rt.jobs.events(job_id, limit=200).events
    kinds = [e["type"] for e in whole]
    slices = [e["slice"] for e in whole if e["type"] == "slice_started"]
    assert slices == list(range(5))  # the first execution's slices too, not just the last's
    assert [e["execution"] for e in whole if e["type"] == "continued"] == [2, 3]
    assert kinds.count("job_ended") == 1 and kinds[-1] == "job_ended"
    assert whole[-1]["status"] == "SUCCEEDED"
    indices = [e["index"] for e in whole if e["type"] == "message"]
    assert indices == list(range(indices[0], indices[0] + len(indices))) and len(indices) > 4
    paged, after = [], None  # small pages across the executions: nothing repeated or skipped
    for _ in range(200):
        page = stack.rt.jobs.events(job_id, after=after, limit=3)
        if not page.events:
            break
        paged.extend(page.events)
        after = page.cursor
    assert paged == whole
