"""A node slice's S3 requests do not grow with the graph; Plan's neither; Fold's grow with its batch.

Each step runs as the Lambda handler runs it (the factory rebuilds the whole Graph, then
`elsai.serverless.orchestration`), against S3 on the test moto server; every S3 request of
the step is counted (bench/multiagent_scale.py, which publishes the same figures with times).
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.multiagent_scale import run_job
from bench.s3env import RequestCounter

SIZES = (5, 20, 50)


@pytest.fixture
def counter() -> Any:
    counting = RequestCounter()
    counting.install()
    yield counting
    counting.uninstall()


def _totals(steps: list[dict[str, Any]], kind: str) -> list[int]:
    return [s["total"] for s in steps if s["kind"] == kind]


def test_request_counts_per_step_stay_flat_as_the_graph_grows(
    s3_bucket: str, counter: RequestCounter
) -> None:
    runs = {size: run_job(counter, s3_bucket, size) for size in SIZES}

    slices = {size: _totals(steps, "node_slice") for size, steps in runs.items()}
    assert [len(slices[size]) for size in SIZES] == list(SIZES)  # every node ran exactly once
    assert min(min(v) for v in slices.values()) > 0
    # the same few requests (± a constant) for 5, 20 and 50 nodes
    assert max(max(v) for v in slices.values()) - min(min(v) for v in slices.values()) <= 2

    plans = [_totals(runs[size], "plan")[0] for size in SIZES]
    assert max(plans) - min(plans) <= 2

    # a fold reads each node of its batch once: its cost per folded node is the same at every size
    per_node: list[float] = []
    for size, steps in runs.items():
        folds = [s for s in steps if s["kind"] == "fold"]
        assert [f["batch_size"] for f in folds] == [1, size - 2, 1]
        per_node.append((folds[1]["total"] - folds[0]["total"]) / (size - 3))
    assert max(per_node) - min(per_node) <= 1
