"""Cold start of the agent handler from the built bundle under CPython 3.12, elsai vs strands.

    python -m bench.cold_start_bench --runs 10 --json out.json

Bundles: elsai's is assembled exactly as CDK's local bundling does (elsai/cdk/bundling.py, init
imports precompiled); strands' is ``pip install --target`` with the same boto3/botocore/
Powertools/pydantic pins as the Lambda lock (pip compiles every module, so strands starts with
bytecode for everything) plus bench/handlers/strands_agent_handler.py as ``agent_handler.py``.
Each sample is a fresh interpreter with only the bundle on the path (infra/cold_start.py); the
variants rotate within every round and the figures are medians over the rounds.

Needs the project's dev environment (CDK for the bundle): bench/run_all.py runs it with
``.venv/bin/python``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "build" / "bench-cold"
TRACING_ON = {"POWERTOOLS_TRACE_DISABLED": "false", "LAMBDA_TASK_ROOT": "/var/task"}

#: label -> (bundle, modules imported, extra environment)
VARIANTS: dict[str, tuple[str, tuple[str, ...], dict[str, str]]] = {
    "elsai, tracing off": ("elsai", ("elsai_lambdas.agent_handler",), {}),
    "elsai, tracing off, + the agent module (example_agent)": (
        "elsai", ("elsai_lambdas.agent_handler", "example_agent"), {},
    ),
    "elsai, X-Ray tracing on": ("elsai", ("elsai_lambdas.agent_handler",), TRACING_ON),
    "strands, same handler shape": ("strands", ("agent_handler",), {}),
}  # fmt: skip


def elsai_bundle() -> Path:
    """A fresh elsai bundle (pip output is cached by elsai/cdk/bundling.py; this only copies)."""
    from elsai.cdk.bundling import assemble_bundle

    target = WORK / "elsai"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    # the agent module goes in as a user's deploy puts it: its code, precompiled
    agent = ROOT / "examples" / "agents" / "example_agent.py"
    assemble_bundle(target, code=[agent], modules=["example_agent"])
    return target


def strands_bundle(python: str, strands_version: str) -> Path:
    """strands-agents and the Lambda lock's shared pins, installed for 3.12 once (cached)."""
    from elsai.cdk.lock import locked_versions

    target = WORK / f"strands-{strands_version}"
    if not (target / ".complete").exists():
        shutil.rmtree(target, ignore_errors=True)
        pins = locked_versions()
        shared = ["boto3", "botocore", "aws-lambda-powertools", "pydantic"]
        cmd = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
               "--target", str(target), f"strands-agents=={strands_version}",
               *(f"{name}=={pins[name]}" for name in shared)]  # fmt: skip
        subprocess.run(cmd, check=True)
        (target / ".complete").write_text(strands_version + "\n")
    shutil.copy(
        ROOT / "bench" / "handlers" / "strands_agent_handler.py", target / "agent_handler.py"
    )
    return target


def run(runs: int, strands_version: str) -> dict[str, Any]:
    """Medians per variant over `runs` rounds; each round runs every variant once, rotated."""
    from infra.cold_start import find_python312, measure

    python = find_python312()
    bundles = {"elsai": elsai_bundle(), "strands": strands_bundle(python, strands_version)}
    labels = list(VARIANTS)
    samples: dict[str, list[dict[str, Any]]] = {label: [] for label in labels}
    for round_no in range(runs):
        shift = round_no % len(labels)
        for label in labels[shift:] + labels[:shift]:
            bundle, modules, env = VARIANTS[label]
            one = measure(bundles[bundle], python=python, runs=1, modules=modules, env=env)
            samples[label].append(one)
    rows = []
    for label in labels:
        got = samples[label]
        rows.append({
            "variant": label,
            "import_ms": round(statistics.median(s["import_ms"] for s in got)),
            "cpu_ms": round(statistics.median(s["cpu_ms"] for s in got)),
            "rss_mb": round(statistics.median(s["rss_mb"] for s in got), 1),
            "xray_loaded": all(s["xray"] for s in got),
        })  # fmt: skip
    version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"],
                             capture_output=True, text=True).stdout.strip()  # fmt: skip
    return {"runs": runs, "python": version, "strands_version": strands_version, "rows": rows}


def table(result: dict[str, Any]) -> list[str]:
    """Markdown rows: one per variant, with the ratio to strands."""
    strands = next(r for r in result["rows"] if r["variant"].startswith("strands"))
    lines = [
        "| variant | init wall (ms) | process CPU (ms) | peak RSS (MB) | X-Ray SDK loaded | wall / strands |",
        "|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        ratio = r["import_ms"] / strands["import_ms"] if strands["import_ms"] else float("nan")
        lines.append(
            f"| {r['variant']} | {r['import_ms']} | {r['cpu_ms']} | {r['rss_mb']} | "
            f"{'yes' if r['xray_loaded'] else 'no'} | {ratio:.2f} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Command line: measure, print the table, optionally write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--strands-version", default="1.62.0")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    result = run(args.runs, args.strands_version)
    print("\n".join(table(result)))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
