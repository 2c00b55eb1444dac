"""Power-loss durable local files per tool cycle: elsai's default vs LangGraph's SqliteSaver.

    .venv-bench/bin/python -m bench.files_durable            # ~1 minute
    .venv-bench/bin/python -m bench.files_durable --repeats 9 --cycles 200

elsai: `FileSessionManager()` on its defaults (`fsync=True`, every file and its directory
fsynced) with `CheckpointConfig(position="both")`; LangGraph: its prebuilt ReAct agent with
`SqliteSaver` (WAL, `synchronous=FULL`) and `durability="sync"`, in its own venv
(bench/langgraph_side.py). Both are power-loss durable; both run the same scripted workload on
the same disk (the system temp dir), each in a child process, alternating, and each side's
best of `--repeats` runs is compared (fsync timing on this shared machine is noisy).

fsyncs per cycle: each side once more under `strace -f -c` (fsync + fdatasync). The floor: the
time of elsai's own work (the same run with `fsync=False`, best of the repeats) plus its
fsyncs that must run one after another, each at the cost of one durable small-file write
measured in the same run. elsai writes 4 files per `both` cycle (toolUse message, after_model
bookmark, toolResult message, after_tools bookmark), each a data fsync then a directory fsync
(the entry must be durable before the next file may name it); the after_tools bookmark runs
alongside the next reply's write, so 6 of the 8 are serial.

Writes bench/results/files_durable.json and its section of bench/results/README.md; exits 1
when the target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import RESULTS_DIR, environment, log, verdict, write_section

TARGET = 0.4
RSS_CYCLES = 5000
SERIAL_FSYNCS = 6
BEGIN, END = "<!-- files_durable:begin -->", "<!-- files_durable:end -->"
ROOT = Path(__file__).resolve().parent.parent
LANGGRAPH_PY = Path(os.environ.get("LANGGRAPH_VENV", ROOT / ".venv-langgraph")) / "bin/python"

ELSAI_CHILD = """
import json, os, resource, sys, time
from bench import elsai_side, workload
from bench.layer_timer import LayerTimer
cycles, directory, fsync = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
warm = elsai_side.make_agent(workload.script(5), position="both",
    session_manager=elsai_side.file_manager("warm", directory + "/warm", fsync=fsync))
warm(workload.PROMPT)
agent = elsai_side.make_agent(workload.script(cycles), position="both",
    session_manager=elsai_side.file_manager("timed", directory + "/timed", fsync=fsync))
timer = elsai_side.time_session_layer(agent, LayerTimer())
os.sync()
t = time.perf_counter(); stop = agent(workload.PROMPT).stop_reason; t = time.perf_counter() - t
assert stop == "end_turn", stop
print(json.dumps({"total_s": t, "cycles": cycles, "layer_s": dict(timer.seconds_by_method),
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""
#: Like-for-like without fsync: time inside each SDK's session layer (bench/layer_timer.py).
LAYER_CHILD = """
import json, os, sys
from bench import elsai_side, strands_side, workload
from bench.layer_timer import LayerTimer
side_name, cycles, directory = sys.argv[1], int(sys.argv[2]), sys.argv[3]
side = strands_side if side_name == "strands" else elsai_side
def build(n, sid):
    if side_name == "strands":
        return side.make_agent(workload.script(n), session_manager=side.file_manager(sid, directory))
    manager = side.file_manager(sid, directory, fsync=False)
    return side.make_agent(workload.script(n), session_manager=manager, position="both")
side.invoke(build(5, "warm"), workload.PROMPT)
agent = build(cycles, "timed")
timer = side.time_session_layer(agent, LayerTimer())
os.sync()
assert side.invoke(agent, workload.PROMPT) == "end_turn"
print(json.dumps({"layer_ms_per_cycle": timer.seconds / cycles * 1000}))
"""
TARGET_LAYER = 0.5

#: The elsai tree before this round's write-path change, for the before/after rows.
BEFORE_COMMIT = "9e5945c"


def _before_tree() -> Path:
    """`elsai/` as of BEFORE_COMMIT, unpacked once (the before rows import it first)."""
    target = Path(tempfile.gettempdir()) / f"elsai-bench-before-{BEFORE_COMMIT}"
    if not (target / "elsai" / "__init__.py").exists():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "archive", BEFORE_COMMIT, "elsai"], cwd=ROOT, capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def _command(side: str, cycles: int, directory: str, fsync: bool = True) -> list[str]:
    if side == "langgraph":
        return [str(LANGGRAPH_PY), "-m", "bench.langgraph_side", "--warmup",
                "--cycles", str(cycles), "--dir", directory]  # fmt: skip
    return [sys.executable, "-c", ELSAI_CHILD, str(cycles), directory, "1" if fsync else "0"]


def _run(
    side: str, cycles: int, fsync: bool = True, strace: bool = False, parent: str | None = None
) -> dict[str, Any]:
    """One run in a fresh directory; under `parent`, it is left for the caller to delete.

    Benchmarks delete their samples' directories together, after the last sample: deleting a
    run's few hundred files frees their blocks, and on a disk mounted with `discard` (this
    host's ext4) the journal commits that follow trim them, which slows the next sample's file
    creates (a 300-byte create took 60 us in a quiet minute and 440 us just after one).
    """
    directory = tempfile.mkdtemp(prefix=f"files-durable-{side}-", dir=parent)
    try:
        cmd = _command("elsai" if side == "elsai-before" else side, cycles, directory, fsync)
        env = dict(os.environ)
        if side == "elsai-before":
            env["PYTHONPATH"] = f"{_before_tree()}{os.pathsep}{ROOT}"
        if strace:
            cmd = ["strace", "-f", "-c", "-e", "trace=fsync,fdatasync", "-o",
                   os.path.join(directory, "strace.txt"), *cmd]  # fmt: skip
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            raise RuntimeError(f"{side} run failed: {proc.stderr[-2000:]}")
        out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
        if strace:
            out["fsync_calls"] = _strace_calls(Path(directory, "strace.txt").read_text())
        return out
    finally:
        if parent is None:
            shutil.rmtree(directory, ignore_errors=True)


def _strace_calls(text: str) -> dict[str, int]:
    calls: dict[str, int] = {}
    for line in text.splitlines():
        match = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(fsync|fdatasync)$", line)
        if match:
            calls[match.group(2)] = int(match.group(1))
    return calls


def layer_times(cycles: int, repeats: int) -> dict[str, Any]:
    """Best ms / cycle inside the session layer, elsai `both` fsync=False vs strands, on disk."""
    samples: dict[str, list[float]] = {"elsai": [], "strands": []}
    with tempfile.TemporaryDirectory(prefix="files-layer-") as parent:  # deleted at the end (_run)
        for r in range(repeats):
            for side in ("elsai", "strands") if r % 2 == 0 else ("strands", "elsai"):
                directory = tempfile.mkdtemp(prefix=f"{side}-", dir=parent)
                proc = subprocess.run(
                    [sys.executable, "-c", LAYER_CHILD, side, str(cycles), directory],
                    cwd=ROOT, capture_output=True, text=True, timeout=900, check=True,
                )  # fmt: skip
                samples[side].append(
                    json.loads(proc.stdout.strip().splitlines()[-1])["layer_ms_per_cycle"]
                )
    best = {k: min(v) for k, v in samples.items()}
    return {"samples": samples, "best": best, "ratio": best["elsai"] / best["strands"]}


def durable_write_cost(samples: int = 200) -> float:
    """Median seconds of one durable small-file write as elsai makes it (temp file + fsync,
    link, directory fsync), on the same disk, in this process."""
    directory = tempfile.mkdtemp(prefix="files-durable-probe-")
    times = []
    try:
        for i in range(samples):
            tmp, final = os.path.join(directory, f".t{i}"), os.path.join(directory, f"m{i}")
            started = time.perf_counter()
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            os.write(fd, b"x" * 400)
            os.fsync(fd)
            os.close(fd)
            os.link(tmp, final)
            os.unlink(tmp)
            dfd = os.open(directory, os.O_RDONLY)
            os.fsync(dfd)
            os.close(dfd)
            times.append(time.perf_counter() - started)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return statistics.median(times)


def wal_append_cost(samples: int = 200) -> float:
    """Median seconds of one durable append as a reused write-ahead log makes it (pwrite into an
    existing, already allocated file, then fdatasync: data only, no metadata to commit)."""
    directory = tempfile.mkdtemp(prefix="files-durable-wal-")
    path = os.path.join(directory, "wal")
    times = []
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            os.write(fd, b"\0" * 4096 * samples)
            os.fsync(fd)
            for i in range(samples):
                started = time.perf_counter()
                os.pwrite(fd, b"x" * 400, i * 4096)
                os.fdatasync(fd)
                times.append(time.perf_counter() - started)
        finally:
            os.close(fd)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return statistics.median(times)


def bench(cycles: int, repeats: int, trace_cycles: int) -> dict[str, Any]:
    variants = [("elsai", True), ("langgraph", True), ("elsai", False), ("elsai-before", True)]
    samples: dict[str, list[float]] = {f"{s} fsync={f}": [] for s, f in variants}
    layers: dict[str, list[dict[str, float]]] = {k: [] for k in samples}
    probes: list[float] = []
    wal_probes: list[float] = []
    with tempfile.TemporaryDirectory(
        prefix="files-durable-"
    ) as parent:  # deleted at the end (_run)
        for r in range(repeats):
            n = r % len(variants)
            for side, fsync in variants[n:] + variants[:n]:
                run = _run(side, cycles, fsync, parent=parent)
                samples[f"{side} fsync={fsync}"].append(run["total_s"] / cycles)
                if "layer_s" in run:
                    layers[f"{side} fsync={fsync}"].append(
                        {"total": run["total_s"], **run["layer_s"]}
                    )
            probes.append(durable_write_cost())
            wal_probes.append(wal_append_cost())
            log(f"  files: repeat {r + 1}/{repeats}")
    best = {k: min(v) for k, v in samples.items()}
    fsyncs = {}
    if shutil.which("strace"):
        for side in ("elsai", "langgraph"):
            calls = _run(side, trace_cycles, strace=True)["fsync_calls"]
            short = _run(side, 5, strace=True)["fsync_calls"]  # the fixed part: warm-up etc.
            fsyncs[side] = {
                "calls": calls,
                "per_cycle": (sum(calls.values()) - sum(short.values())) / (trace_cycles - 5),
            }
    write_cost = min(probes)
    profile = {k: _profile(v, cycles) for k, v in layers.items() if v}
    rss = _run("elsai", RSS_CYCLES, fsync=False)["rss_mb"]
    floor = best["elsai fsync=False"] + SERIAL_FSYNCS / 2 * write_cost
    return {
        "cycles": cycles,
        "repeats": repeats,
        "ms_per_cycle_samples": {k: [x * 1000 for x in v] for k, v in samples.items()},
        "best_ms_per_cycle": {k: v * 1000 for k, v in best.items()},
        "durable_write_ms": write_cost * 1000,
        "durable_write_ms_samples": [p * 1000 for p in probes],
        "wal_append_ms_samples": [p * 1000 for p in wal_probes],
        "fsyncs_per_cycle": fsyncs,
        "floor_ms_per_cycle": floor * 1000,
        "profile_ms_per_cycle": profile,
        "rss_mb_5000_cycles": rss,
        "ratio": best["elsai fsync=True"] / best["langgraph fsync=True"],
        "floor_ratio": floor / best["langgraph fsync=True"],
        "to_floor": best["elsai fsync=True"] / floor,
    }


def _profile(runs: list[dict[str, float]], cycles: int) -> dict[str, float]:
    """ms per cycle of the best run, split: each persistence method, and the rest of the loop."""
    best = min(runs, key=lambda r: r["total"])
    out = {k: v / cycles * 1000 for k, v in best.items() if k != "total"}
    out["rest of the loop"] = best["total"] / cycles * 1000 - sum(out.values())
    out["total"] = best["total"] / cycles * 1000
    return out


def markdown(results: dict[str, Any]) -> str:
    env, f, layer = results["environment"], results["files"], results["layer"]
    best = f["best_ms_per_cycle"]
    met = f["ratio"] <= TARGET
    near = f["to_floor"] <= 1.1
    lines = [
        "## Power-loss durable local files: elsai's default vs LangGraph (SqliteSaver, sync)",
        "",
        f"Run {env['timestamp']}, elsai {env['elsai_commit']}, {results['langgraph_versions']}; "
        f"`python -m bench.files_durable` ({results['duration_s']:.0f} s). Load average (1 min) "
        f"at start / end: {env['load_average_at_start'][0]:.1f} / "
        f"{results['load_average_at_end'][0]:.1f} on 2 cores shared with other engineers' tests. "
        f"{f['cycles']} tool cycles per invocation, each side in its own child process, "
        f"alternating; best of {f['repeats']} per side; disk: the system temp dir (ext4).",
        "",
        "| variant | best ms / cycle | median ms / cycle | fsyncs / cycle |",
        "|---|---|---|---|",
    ]
    fs = f["fsyncs_per_cycle"]
    names = {"elsai fsync=True": "elsai", "langgraph fsync=True": "langgraph"}
    for key, values in f["ms_per_cycle_samples"].items():
        side = names.get(key)
        if side in fs:
            per = f"{fs[side]['per_cycle']:.1f} ({fs[side]['calls']})"
        else:
            per = "0" if key.endswith("fsync=False") else "not traced"
        lines.append(
            f"| {key.replace('fsync=', 'fsync=')} | {best[key]:.2f} | "
            f"{statistics.median(values):.2f} | {per} |"
        )
    lines += [
        "",
        f"One durable small-file write (temp + fsync, link, directory fsync), measured in this "
        f"run: {f['durable_write_ms']:.3f} ms. Floor for elsai = its own work (fsync=False, "
        f"{best['elsai fsync=False']:.2f} ms) + {SERIAL_FSYNCS // 2} serial durable writes "
        f"({SERIAL_FSYNCS} fsyncs: toolUse message, after_model bookmark, toolResult message; the "
        f"after_tools bookmark runs alongside the next reply) = {f['floor_ms_per_cycle']:.2f} ms.",
        "",
        "Why the write order needs these fsyncs: the spec's layout stores every message as a new "
        "file and the bookmark by rename, so each durable write changes a directory (a journal "
        "commit for the file, then one for its directory, before the next write may name it). "
        "LangGraph appends to a reused SQLite WAL and fdatasyncs it: data only. The two probes, "
        "median per repeat in this run: durable create (temp + fsync, link, directory fsync) "
        + ", ".join(f"{x:.3f}" for x in f["durable_write_ms_samples"])
        + " ms; WAL-style durable append (pwrite + fdatasync into an allocated file) "
        + ", ".join(f"{x:.3f}" for x in f["wal_append_ms_samples"])
        + " ms.",
        "",
        "| measure | value | target | verdict |",
        "|---|---|---|---|",
        f"| elsai / LangGraph, total time per cycle (best of each) | {f['ratio']:.2f} | "
        f"<= {TARGET} | {verdict(met)} |",
        f"| elsai / its fsync floor | {f['to_floor']:.2f} | <= 1.10 | {verdict(near)} |",
        f"| the floor / LangGraph | {f['floor_ratio']:.2f} | (what the write order allows) | |",
        f"| time in the session layer, no fsync (elsai both fsync=False "
        f"{layer['best']['elsai']:.3f} / strands FileSessionManager "
        f"{layer['best']['strands']:.3f} ms / cycle, best of {f['repeats']}) | "
        f"{layer['ratio']:.2f} | <= {TARGET_LAYER} | "
        f"{verdict(layer['ratio'] <= TARGET_LAYER)} |",
        f"| peak RSS of a {RSS_CYCLES:,}-cycle scripted run (files, fsync=False) | "
        f"{f['rss_mb_5000_cycles']:.0f} MB | < 100 MB | "
        f"{verdict(f['rss_mb_5000_cycles'] < 100)} |",
        "",
        f"Where each millisecond of a cycle goes (best run of each, ms / cycle; `before` = elsai "
        f"at {BEFORE_COMMIT}, before this round's write-path change, same disk, same run; "
        "`boundary` = agent.json + bookmarks, `message_appended` = message files, rest = the "
        "loop, the model and the tool):",
        "",
    ]
    prof = f["profile_ms_per_cycle"]
    methods = sorted({m for p in prof.values() for m in p} - {"total", "rest of the loop"})
    cols = [*methods, "rest of the loop", "total"]
    lines += ["| variant | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for key, p in prof.items():
        lines.append(f"| {key} | " + " | ".join(f"{p.get(c, 0.0):.3f}" for c in cols) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cycles", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--trace-cycles", type=int, default=45)
    parser.add_argument("--out", default=RESULTS_DIR)
    args = parser.parse_args(argv)
    if not LANGGRAPH_PY.exists():
        log(f"{LANGGRAPH_PY} is missing: run bench/run.sh once (it creates .venv-langgraph)")
        return 2
    started = time.perf_counter()
    results: dict[str, Any] = {"environment": environment(), "arguments": vars(args)}
    versions = subprocess.run(
        [str(LANGGRAPH_PY), "-c", "import importlib.metadata as m; print(', '.join("
         "f'{p} {m.version(p)}' for p in ('langgraph', 'langgraph-checkpoint-sqlite')))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    results["langgraph_versions"] = versions.stdout.strip()
    results["files"] = bench(args.cycles, args.repeats, args.trace_cycles)
    results["layer"] = layer_times(args.cycles, args.repeats)
    results["duration_s"] = time.perf_counter() - started
    results["load_average_at_end"] = os.getloadavg()
    text = markdown(results)
    print(text)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "files_durable.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    write_section(text, os.path.join(args.out, "README.md"), BEGIN, END)
    f = results["files"]
    ok = (f["ratio"] <= TARGET or f["to_floor"] <= 1.1) and f["rss_mb_5000_cycles"] < 100
    ok = ok and results["layer"]["ratio"] <= TARGET_LAYER
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
