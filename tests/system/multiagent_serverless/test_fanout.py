"""A wide fan-out Graph on the local runtime: writers killed mid-tool re-run only their slice.

The same shape as the 50-node proof (bench/multiagent_fanout_local.py: planner -> 48 writers
-> editor, maxParallelNodes 8), made smaller so it fits `make test` on two cores: planner ->
8 writers -> editor, maxParallelNodes 4, two writers SIGKILLed inside their tool call.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bench.fanout_graph import writer_names
from bench.multiagent_fanout_local import fanout_runtime, run_fanout

SIZE, PARALLEL, KILLED = 10, 4, {"writer_02", "writer_05"}


@pytest.fixture(scope="module")
def runtime() -> Iterator[Any]:
    with fanout_runtime(PARALLEL) as rt:
        yield rt


def test_only_the_killed_writers_rerun_their_slice(runtime: Any) -> None:
    report = run_fanout(runtime, SIZE, KILLED)

    assert report["job"]["status"] == "SUCCEEDED", report["job"]
    expected = {name: 1 for name in ["planner", *writer_names(SIZE), "editor"]}
    expected.update({name: 2 for name in KILLED})
    assert report["node_slices"] == expected
    assert set(report["killed"]) == KILLED
    # the retries resumed from the killed writers' own checkpoints; no other node resumed
    assert set(report["resumed"]) == KILLED
    assert 1 <= report["most_at_once"] <= PARALLEL
    assert report["steps"]["plan"] == report["steps"]["fold"] == 3
    text = report["job"]["result"]["text"]
    assert text == "[editor done]"
