"""A small, seeded fault storm on the local runtime (bench/storm.py; `make bench` runs 20 jobs).

Three concurrent jobs, each slice's first attempt planned to die (inside a tool call or at a
random moment), 10% of the children's S3 requests answered 503 SlowDown or applied with the
response dropped. Nothing may be lost: the storm's own judge checks every job.
"""

from __future__ import annotations

import os

from bench.storm import StormConfig, run_storm, table

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")


def test_a_small_storm_loses_nothing() -> None:
    config = StormConfig(
        jobs=3, kill_rate=1.0, max_kills_per_job=1, s3_fault_rate=0.1, seed=13, timeout_s=240
    )
    result = run_storm(config)
    report = "\n".join(table(result))
    assert result["violations"] == [], report
    assert result["succeeded"] == 3, report
    # The storm really happened: a planned in-tool kill always fires, and the seeded proxy
    # faults a fixed share of its first requests.
    assert result["kills"] >= 1 and result["sfn_retries"] >= result["kills"], report
    assert result["s3_slowdown"] + result["s3_dropped"] >= 1, report
