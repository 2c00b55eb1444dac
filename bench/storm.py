"""Fault storm on the local runtime: many concurrent jobs, random kills, a misbehaving S3.

    python -m bench.storm                  # 20 jobs (what `make bench` runs), table on stdout
    python -m bench.storm --jobs 3 --json out.json

The real synthesized state machine runs on moto; every agent slice is a real child process
of the real handler. Faults: random SIGKILLs of slices (inside a tool call after its side
effect, or at a random moment) and, in front of moto, S3 503 SlowDown and dropped responses
(request applied, response lost) at ``--s3-fault-rate`` of the children's requests; Step
Functions retries the failed slices. Then, per job: SUCCEEDED, a valid transcript
(tests/support/transcripts.py), the prompt stored exactly once, every tool call answered by a real run,
and a tool re-run only if its result was not saved when the re-running attempt started.
Bounded: kills per job, S3 faults in all, and one overall deadline.

Needs the project's dev environment (moto with Step Functions, CDK for the template):
bench/run_all.py runs it with ``.venv/bin/python``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class StormConfig:
    """How big the storm is; defaults are the `make bench` run."""

    jobs: int = 20
    orders_per_job: int = 3
    kill_rate: float = 0.3  # per slice attempt
    max_kills_per_job: int = 2
    kill_window_s: float = 1.5
    s3_fault_rate: float = 0.05
    max_s3_faults: int = 500
    tool_seconds: float = 0.2
    seed: int = 13
    timeout_s: float = 900.0


@dataclass
class JobOutcome:
    """What one job ended as, and every rule it broke."""

    job_id: str
    status: str
    messages: int = 0
    tool_runs: int = 0
    reruns: int = 0
    repaired: int = 0  # tool calls a crash cut off before they ran, answered "interrupted"
    violations: list[str] = field(default_factory=list)


class _Snapshots:
    """The fault plan wrapper: before each slice attempt, which tool results are saved."""

    def __init__(self, rt: Any, kills: Any) -> None:
        self.rt, self.kills = rt, kills
        self.saved: dict[tuple[str, int, int], set[str]] = {}

    def __call__(self, info: Any) -> Any:
        if info.action == "run_slice":
            saved = {i for m in _messages(self.rt, info.session_id) for i in _result_ids(m)}
            self.saved[(info.job_id, info.slice, info.attempt)] = saved
        return self.kills(info)


def _message_keys(rt: Any, session_id: str) -> list[tuple[int, str]]:
    from elsai.session.layout import keys

    prefix = keys.messages_prefix(session_id, "agent")
    found = [(keys.message_index(k), k) for k, _ in rt.session_files(session_id)]
    return sorted((i, k) for i, k in found if i is not None and k.startswith(prefix))


def _messages(rt: Any, session_id: str) -> list[dict[str, Any]]:
    return [rt.read_json(k)["message"] for _, k in _message_keys(rt, session_id)]


def _result_ids(message: dict[str, Any]) -> list[str]:
    return [b["toolResult"]["toolUseId"] for b in message["content"] if "toolResult" in b]


def _interrupted_ids(message: dict[str, Any]) -> list[str]:
    """Results the resume wrote for a toolUse whose tool never ran (the crash came first)."""
    from elsai.loop.messages import INTERRUPTED_TOOL_TEXT

    return [
        b["toolResult"]["toolUseId"]
        for b in message["content"]
        if "toolResult" in b
        and b["toolResult"].get("status") == "error"
        and [c.get("text") for c in b["toolResult"].get("content", [])] == [INTERRUPTED_TOOL_TEXT]
    ]


def _prompt(n: int, orders: int) -> str:
    ids = [str(100 * (n + 1) + k) for k in range(1, orders + 1)]
    return f"Process orders {', '.join(ids[:-1])} and {ids[-1]}" if len(ids) > 1 else ids[0]


def _judge(rt: Any, job: dict[str, Any], final: dict[str, Any], snaps: _Snapshots,
           runs: list[dict[str, Any]]) -> JobOutcome:  # fmt: skip
    from elsai.session.layout import keys
    from tests.support.transcripts import transcript_problems

    out = JobOutcome(job["job_id"], final.get("status", "?"))
    if out.status != "SUCCEEDED":
        out.violations.append(f"status {out.status}")
        return out
    indexed = _message_keys(rt, job["session_id"])
    if [i for i, _ in indexed] != list(range(len(indexed))):
        out.violations.append(f"message indices not contiguous: {[i for i, _ in indexed]}")
    messages = [rt.read_json(k)["message"] for _, k in indexed]
    bookmark = rt.read_json(keys.checkpoint_key(job["session_id"], "agent"))
    out.messages = len(messages)
    out.violations += transcript_problems(messages, bookmark=bookmark)
    prompts = [m for m in messages if m["role"] == "user" and _has_text(m, job["prompt"])]
    if len(prompts) != 1:
        out.violations.append(f"prompt stored {len(prompts)} times")
    ok = [r for r in runs if r["outcome"] == "ok"]
    out.tool_runs = len(ok)
    answered = {i for m in messages for i in _result_ids(m)}
    by_id: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in ok:
        by_id[run["tool_use_id"]].append(run)
    repaired = {i for m in messages for i in _interrupted_ids(m)}
    out.repaired = len(repaired - set(by_id))
    for tool_use_id in repaired & set(by_id):
        out.violations.append(f"{tool_use_id} ran but is answered as interrupted")
    for tool_use_id in answered - repaired - set(by_id):
        out.violations.append(f"{tool_use_id} answered without a tool run")
    for tool_use_id, id_runs in by_id.items():
        for run in id_runs[1:]:
            out.reruns += 1
            saved = snaps.saved.get((run["job_id"], run["slice"], run["attempt"]), set())
            if tool_use_id in saved:
                out.violations.append(f"{tool_use_id} re-ran although its result was saved")
    return out


def _has_text(message: dict[str, Any], text: str) -> bool:
    return any(text in b.get("text", "") for b in message["content"])


def run_storm(cfg: StormConfig) -> dict[str, Any]:
    """Run one storm; returns the counts, per-job outcomes and the violations (should be [])."""
    for path in (str(ROOT), str(ROOT / "lambdas")):
        if path not in sys.path:
            sys.path.insert(0, path)
    from elsai.local import LocalRuntime
    from elsai.local.faults import random_kills
    from elsai.local.s3_faults import S3FaultProxy

    started = time.monotonic()
    env = {"ELSAI_EXAMPLE_TOOL_SECONDS": str(cfg.tool_seconds)}
    with LocalRuntime(project=ROOT, fast_retries=True, child_env=env) as rt:
        proxy = S3FaultProxy(rt.endpoint, rate=cfg.s3_fault_rate, seed=cfg.seed,
                             max_faults=cfg.max_s3_faults)  # fmt: skip
        with proxy:
            rt.child_env["AWS_ENDPOINT_URL_S3"] = proxy.endpoint
            kills = random_kills(seed=cfg.seed, kill_rate=cfg.kill_rate,
                                 max_kills_per_job=cfg.max_kills_per_job, kill_window_s=cfg.kill_window_s)  # fmt: skip
            snaps = _Snapshots(rt, kills)
            rt.faults = snaps
            jobs = []
            for n in range(cfg.jobs):
                prompt = _prompt(n, cfg.orders_per_job)
                started_job = rt.jobs.start(prompt, session_id=f"storm-{cfg.seed}-{n}")
                jobs.append({**started_job.as_dict(), "prompt": prompt})
            finals = []
            for job in jobs:
                left = max(1.0, cfg.timeout_s - (time.monotonic() - started))
                try:
                    finals.append(rt.wait(job["job_id"], timeout=left).as_dict())
                except Exception as exc:  # a timeout is a violation, not a crash of the bench
                    finals.append({"status": f"not finished: {type(exc).__name__}: {exc}"})
            runs = defaultdict(list)
            for line in rt.ledger():
                runs[line["job_id"]].append(line)
            outcomes = [
                _judge(rt, job, final, snaps, runs[job["job_id"]])
                for job, final in zip(jobs, finals, strict=True)
            ]
            return _summary(cfg, rt, proxy, outcomes, time.monotonic() - started)


def _summary(cfg: StormConfig, rt: Any, proxy: Any, outcomes: list[JobOutcome],
             seconds: float) -> dict[str, Any]:  # fmt: skip
    slices = [r for r in rt.invocations if r.info.action == "run_slice"]
    errors = Counter(r.error["errorType"] for r in slices if r.error)
    return {
        "config": asdict(cfg),
        "seconds": round(seconds, 1),
        "jobs": len(outcomes),
        "succeeded": sum(o.status == "SUCCEEDED" for o in outcomes),
        "slice_invocations": len(slices),
        "kills": sum(1 for r in slices if r.returncode == -9),
        "failed_attempts_by_error": dict(errors),
        # what failed other than a kill: the job, the attempt and the message, to debug from
        "failed_attempts": [
            {
                "job_id": r.info.job_id,
                "slice": r.info.slice,
                "attempt": r.info.attempt,
                "error": r.error["errorType"],
                "message": str(r.error.get("errorMessage", ""))[:500],
            }
            for r in slices
            if r.error and r.error["errorType"] != "Runtime.ExitError"
        ],  # fmt: skip
        "sfn_retries": sum(1 for r in slices if r.info.attempt > 1),
        "s3_requests": proxy.counts["requests"],
        "s3_slowdown": proxy.counts["slowdown"],
        "s3_dropped": proxy.counts["dropped"],
        "tool_runs": sum(o.tool_runs for o in outcomes),
        "tool_reruns": sum(o.reruns for o in outcomes),
        "tool_calls_interrupted": sum(o.repaired for o in outcomes),
        "violations": [f"{o.job_id}: {v}" for o in outcomes for v in o.violations],
        "ledger": rt.ledger() if any(o.violations for o in outcomes) else [],
        "load_average": os.getloadavg(),
    }


COLUMNS = (
    ("jobs", "jobs"), ("succeeded", "SUCCEEDED"), ("slice_invocations", "slice invocations"),
    ("kills", "SIGKILLs"), ("s3_requests", "S3 requests"), ("s3_slowdown", "503 SlowDown"),
    ("s3_dropped", "dropped responses"), ("sfn_retries", "Step Functions retries"),
    ("tool_reruns", "tool re-runs"), ("tool_calls_interrupted", "tool calls answered 'interrupted'"),
)  # fmt: skip


def table(result: dict[str, Any]) -> list[str]:
    """The storm as a markdown table (one row) plus the violations, if any."""
    head = [label for _, label in COLUMNS] + ["violations"]
    row = [str(result[key]) for key, _ in COLUMNS] + [str(len(result["violations"]))]
    lines = [
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        "| " + " | ".join(row) + " |",
    ]
    lines += [f"- violation: {v}" for v in result["violations"][:20]]
    return lines


def main(argv: list[str] | None = None) -> int:
    """Command line: run a storm, print its table; exit 1 on any violation."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = StormConfig()
    for name, value in asdict(defaults).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = vars(parser.parse_args(argv))
    out = args.pop("json")
    result = run_storm(StormConfig(**args))
    print("\n".join(table(result)))
    print(
        f"({result['seconds']} s; failed attempts by error: {result['failed_attempts_by_error']})"
    )
    if out:
        out.write_text(json.dumps(result, indent=1, default=str))
    return 1 if result["violations"] or result["succeeded"] != result["jobs"] else 0


if __name__ == "__main__":
    sys.exit(main())
