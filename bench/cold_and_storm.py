"""Cold start (both SDKs) and the fault storm: the benchmark run's two dev-venv parts.

Both need the project's dev environment (CDK to assemble the Lambda bundle, moto with Step
Functions for the local runtime), not the bench venv, so bench/run_all.py runs them here as
subprocesses of ``.venv/bin/python`` (or ``$ELSAI_DEV_PYTHON``); each writes its JSON result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.common import verdict

ROOT = Path(__file__).resolve().parents[1]
COLD_TARGET_MS = 250  # init of the agent handler, tracing off (the one owner of this target)


def dev_python() -> str | None:
    """The interpreter of the project's dev venv, if there is one."""
    exe = os.environ.get("ELSAI_DEV_PYTHON") or str(ROOT / ".venv" / "bin" / "python")
    return exe if Path(exe).exists() else None


def _run_module(module: str, args: list[str]) -> dict[str, Any]:
    exe = dev_python()
    if exe is None:
        return {
            "skipped": "no dev venv (.venv/bin/python); run `make setup` or set ELSAI_DEV_PYTHON"
        }
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        env = {**os.environ, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
               "POWERTOOLS_TRACE_DISABLED": "true"}  # fmt: skip
        proc = subprocess.run([exe, "-m", module, *args, "--json", str(out)], cwd=ROOT, env=env,
                              capture_output=True, text=True)  # fmt: skip
        print(proc.stdout, end="", file=sys.stderr)
        if not out.exists():
            return {"skipped": f"{module} failed (exit {proc.returncode}): {proc.stderr[-2000:]}"}
        result: dict[str, Any] = json.loads(out.read_text())
        result["exit_code"] = proc.returncode
        return result


def run_cold_start(runs: int, strands_version: str) -> dict[str, Any]:
    """Cold start of both handlers from their 3.12 bundles, `runs` rounds."""
    return _run_module(
        "bench.cold_start_bench", ["--runs", str(runs), "--strands-version", strands_version]
    )


def run_storm(jobs: int) -> dict[str, Any]:
    """The fault storm with `jobs` concurrent jobs (other settings: bench/storm.py defaults)."""
    return _run_module("bench.storm", ["--jobs", str(jobs)])


def markdown(results: dict[str, Any]) -> list[str]:
    """The two sections of the results README (empty when neither ran)."""
    lines: list[str] = []
    cold, storm = results.get("cold_start"), results.get("storm")
    if cold:
        lines += [
            "",
            "## Cold start of the agent handler (Python 3.12, built bundle)",
            "",
        ]
        if "skipped" in cold:
            lines.append(f"Not measured: {cold['skipped']}")
        else:
            lines += _cold_lines(cold)
            env = results.get("environment", {})
            if "load_average_at_end" in env:
                lines += ["", f"Machine load (1-min load average) at the start / end of this run: "
                          f"{env['load_average_at_start'][0]:.1f} / {env['load_average_at_end'][0]:.1f} "
                          "on 2 CPUs (other engineers' test suites were running)."]  # fmt: skip
    if storm:
        lines += ["", "## Fault storm on the local runtime", ""]
        if "skipped" in storm:
            lines.append(f"Not run: {storm['skipped']}")
        else:
            lines += _storm_lines(storm)
    return lines


def _cold_lines(cold: dict[str, Any]) -> list[str]:
    from bench.cold_start_bench import table

    elsai = cold["rows"][0]
    strands = next(r for r in cold["rows"] if r["variant"].startswith("strands"))
    return [
        f"`import agent_handler` in a fresh CPython {cold['python']} with only the bundle on the path "
        f"(no bytecode writes, as on Lambda's read-only /var/task); median of {cold['runs']} rounds, "
        "the variants rotating in every round. Init wall = time of the import; process CPU = user+system "
        "CPU of the whole process, interpreter start included (less swayed by the other engineers' load "
        f"on this 2-core machine); peak RSS = VmHWM. strands-agents {cold['strands_version']} with the "
        "same boto3/botocore/Powertools/pydantic pins, handler: bench/handlers/strands_agent_handler.py.",
        "",
        *table(cold),
        "",
        "| measure | elsai | strands | ratio | target | verdict |",
        "|---|---|---|---|---|---|",
        f"| init wall, tracing off (ms) | {elsai['import_ms']} | {strands['import_ms']} | "
        f"{elsai['import_ms'] / strands['import_ms']:.2f} | <= {COLD_TARGET_MS} ms | "
        f"{verdict(elsai['import_ms'] <= COLD_TARGET_MS)} |",
        f"| process CPU, tracing off (ms) | {elsai['cpu_ms']} | {strands['cpu_ms']} | "
        f"{elsai['cpu_ms'] / strands['cpu_ms']:.2f} | <= {COLD_TARGET_MS} ms (informational) | "
        f"{verdict(elsai['cpu_ms'] <= COLD_TARGET_MS)} |",
        f"| X-Ray SDK imported with tracing off | {'yes' if elsai['xray_loaded'] else 'no'} | — | — | no | "
        f"{verdict(not elsai['xray_loaded'])} |",
    ]


def _storm_lines(storm: dict[str, Any]) -> list[str]:
    from bench.storm import table

    cfg = storm["config"]
    ok = not storm["violations"] and storm["succeeded"] == storm["jobs"]
    return [
        f"{storm['jobs']} concurrent jobs of {cfg['orders_per_job']} tool calls through the synthesized "
        "state machine on moto, every slice a real child process. Kills: each slice attempt with "
        f"probability {cfg['kill_rate']} (at most {cfg['max_kills_per_job']} per job), inside a tool "
        f"call after its side effect or at a random moment within {cfg['kill_window_s']} s. S3: "
        f"{cfg['s3_fault_rate']:.0%} of the children's requests answered 503 SlowDown or applied with "
        f"the response dropped (a proxy in front of moto; cap {cfg['max_s3_faults']}). Seed {cfg['seed']}; "
        f"{storm['seconds']} s; load average at the end {storm['load_average'][0]:.1f}. "
        "'tool calls answered interrupted': a kill between the assistant message and its after_model "
        "bookmark, before the tool ran; the resume answers it as interrupted (the tool never ran).",
        "",
        *table(storm),
        "",
        f"Failed slice attempts by error: {storm['failed_attempts_by_error']}. Verdict (every job "
        f"SUCCEEDED, violations = 0): {verdict(ok)}.",
    ]
