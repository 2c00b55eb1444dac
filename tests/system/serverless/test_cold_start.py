"""The same crash and recovery with cold children: a fresh interpreter per Lambda invocation.

The other modules fork children from a pre-imported server; this one checks the plain
`python -m elsai.local.lambda_child` path (event on stdin) gives the same behaviour.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from elsai.local import LocalRuntime, kill_in_tool
from tests.system.local_stack import LocalStack
from tests.system.serverless.helpers import assert_valid_conversation, prompt_count

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def cold_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    ledger = tmp_path_factory.mktemp("cold") / "ledger.jsonl"
    with LocalRuntime(project=HERE.parents[2], agent_factory="serverless_agents:build_agent", fast_retries=True,
                      pythonpath=(str(HERE),), child_env={"AGENT_LEDGER": str(ledger)}, preloaded=False) as rt:  # fmt: skip
        yield LocalStack(rt, ledger)


def test_cold_children_are_killed_retried_and_resumed(cold_stack: LocalStack) -> None:
    rt = cold_stack.rt
    rt.faults = kill_in_tool(1, slice=0, attempt=1)
    job = rt.jobs.start("Process orders 7 and 8")
    final = rt.wait(job.job_id, timeout=90)

    assert final.status == "SUCCEEDED", final
    killed, resumed = rt.slices(job.job_id)
    assert (
        killed.returncode == -9
        and killed.error is not None
        and killed.error["errorType"] == "Runtime.ExitError"
    )
    assert resumed.result is not None and resumed.result["resume_position"] == "after_model"
    assert cold_stack.runs_per_order(job.session_id) == {"7": 2, "8": 1}
    messages = cold_stack.transcript(job.session_id)
    assert_valid_conversation(messages)
    assert prompt_count(messages, "Process orders 7 and 8") == 1
