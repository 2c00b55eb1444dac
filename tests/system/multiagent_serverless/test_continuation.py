"""A Graph job continues in new executions between batches, and survives a kill right before one.

The local runtime (moto in this process) runs the state machine synthesized with slicesPerExecution=4 (the handlers
are real child processes): researcher -> (writer_a, writer_b) -> editor spends its budget
after the researcher's batch (RunSlice + 1 node slice + the batch's own states) and again after
the writers' batch, so the job spans three executions. The first Fold, the last step before
the first continuation, is SIGKILLed; its retry folds the batch once.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from elsai.local import Fault, InvocationInfo, LocalRuntime
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
        for s in services_in_template(synth_template({"slicesPerExecution": 4}), base.stack_name)
        if s.service_id == base.service_id
    ]
    service = dataclasses.replace(base, template=small.template)
    ledger = tmp_path_factory.mktemp("continuation") / "ledger.jsonl"
    runtime = LocalRuntime(project=ROOT, service=service, agent_factory="ma_agents:build_agent",
                           fast_retries=True, pythonpath=(str(HERE),),
                           child_env={"AGENT_LEDGER": str(ledger)})  # fmt: skip
    with runtime:  # the runtime makes moto's states:startExecution task work itself
        yield LocalStack(runtime, ledger)


def test_a_graph_continues_twice_and_a_kill_before_a_continuation_reruns_no_node(
    small_stack: LocalStack,
) -> None:
    rt = small_stack.rt

    def plan(info: InvocationInfo) -> Fault | None:
        if info.action == "fold" and info.attempt == 1:
            return Fault(kill_after_seconds=0.0)  # inside the fold, before its result returns
        return None

    rt.faults = plan
    job = rt.jobs.start("Write about otters", agent_id="graph")
    final = rt.wait(job.job_id, timeout=180)

    assert final.status == "SUCCEEDED", final.error
    assert final.executions == 3
    folds = [r for r in rt.invocations if r.info.job_id == job.job_id and r.info.action == "fold"]
    assert folds[0].killed and folds[1].result is not None  # the killed fold was retried
    node_slices = Counter(r.info.agent_id for r in small_stack.node_slices(job.job_id))
    assert node_slices == {"researcher": 1, "writer_a": 1, "writer_b": 1, "editor": 1}
    tool_runs = Counter(x["step"] for x in small_stack.ledger(job.session_id))
    assert set(tool_runs.values()) == {1}  # no node's work ran twice across the chain
    assert len(tool_runs) == 5
    cursor = small_stack.cursor(job.session_id)
    order = cursor["execution_order"]  # each node folded once, in its batch
    assert order[0] == "researcher" and sorted(order[1:3]) == ["writer_a", "writer_b"]
    assert order[3:] == ["editor"]
    assert "writer_a" in final.result["text"] and "writer_b" in final.result["text"]
    events = rt.jobs.events(job.job_id, limit=200).events  # the whole chain's, in order
    assert [e["execution"] for e in events if e["type"] == "continued"] == [2, 3]
    assert [e["type"] for e in events].count("job_ended") == 1
    started = Counter(e["node"] for e in events if e["type"] == "slice_started" and "node" in e)
    assert set(started) == {"researcher", "writer_a", "writer_b", "editor"}  # every execution's
