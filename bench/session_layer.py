"""Time inside each SDK's session layer per tool cycle, like for like without fsync, on disk.

elsai `FileSessionManager(fsync=False)` with `CheckpointConfig(position="both")` against
strands-agents' `FileSessionManager` (neither fsyncs; both survive a killed process), each in
a child process, alternating, best of the repeats (bench/layer_timer.py wraps the methods).

On this machine's disk the cost of creating a file swings from about 10 us to about 900 us
(ext4 without a journal skips the inodes freed in the last 35 s: `bench.common.settle_disk`),
and file creations are most of both layers' time when it is high. So the run also measures:

- elsai's layer on tmpfs (`/dev/shm`), where a file creation costs about 10 us: its own work;
- the write order alone, as bare system calls (bench/write_order.py), on tmpfs and on disk,
  taking its turn among the sides' runs.

The floor of elsai's layer on disk is its own work with the write order's cost on tmpfs
swapped for the cost on disk. elsai creates four files per cycle where strands creates three,
so when file creations dominate, that floor is above half of strands' layer.

This runs before anything that fsyncs (bench/check.py), and each repeat starts once the files
the previous samples freed no longer slow new ones (`bench.common.settle_disk`, about 36 s):
the variants then take their turns, in an order rotated by one per repeat, so each side's
best run is one that started on a settled disk.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

from bench import write_order
from bench.common import ROOT, TMPFS, rotated, scratch, settle_disk, target_met

TARGET_LAYER = 0.5

#: One side's session layer, ms per cycle (argv: side, cycles, directory).
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


def _layer_ms(side: str, cycles: int, parent: str) -> float:
    directory = tempfile.mkdtemp(prefix=f"{side}-", dir=parent)
    proc = subprocess.run(
        [sys.executable, "-c", LAYER_CHILD, side, str(cycles), directory],
        cwd=ROOT, capture_output=True, text=True, timeout=900, check=True,
    )  # fmt: skip
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["layer_ms_per_cycle"])


#: (label, side, on tmpfs), taking turns in an order rotated by one per repeat.
VARIANTS = [
    ("elsai", "elsai", False),
    ("strands", "strands", False),
    ("write order disk", "write order", False),
    ("elsai tmpfs", "elsai", True),
    ("write order tmpfs", "write order", True),
]


def layer_times(
    cycles: int, repeats: int, under: str | None = None, settle: bool = True
) -> dict[str, Any]:
    """Best ms / cycle inside each side's session layer on disk, and elsai's floor there.

    Each repeat starts on a settled disk (`settle_disk`; `settle=False` for smoke tests); the
    write order alone takes its turn among the sides' runs, best of the repeats like them.
    The runs' files on disk go into `under` when given (its owner deletes them), else into a
    directory deleted at the end.
    """
    tmpfs = os.path.isdir(TMPFS)
    variants = [v for v in VARIANTS if tmpfs or not v[2]]
    samples: dict[str, list[float]] = {v[0]: [] for v in variants}
    with (
        scratch("files-layer-", under) as disk,
        scratch("files-layer-", on=TMPFS if tmpfs else None) as shm,
    ):
        waited = 0.0
        for r in range(repeats):
            waited += settle_disk(settle)
            for label, side, on_tmpfs in rotated(variants, r):
                parent = shm if on_tmpfs else disk
                if side == "write order":
                    samples[label].append(write_order.replay(parent, cycles, False) * 1000)
                else:
                    samples[label].append(_layer_ms(side, cycles, parent))
    best = {k: min(v) for k, v in samples.items()}
    out: dict[str, Any] = {"samples": samples, "best": best, "settle_s": waited,
                           "ratio": best["elsai"] / best["strands"]}  # fmt: skip
    if tmpfs:
        floor = write_order.floor(
            best["elsai tmpfs"], best["write order tmpfs"], best["write order disk"]
        )
        out.update(floor=floor, floor_ratio=floor / best["strands"], to_floor=best["elsai"] / floor)
    return out


def markdown_rows(layer: dict[str, Any]) -> list[str]:
    """What the layer's floor is made of, for a results page."""
    best = layer["best"]
    if "floor" not in layer:
        return ["No tmpfs here: the layer's floor was not measured."]
    return [
        f"Each repeat started on a settled disk ({layer['settle_s']:.0f} s of waiting in all). "
        f"Session layer without fsync, best of {len(layer['samples']['elsai'])} (ms / cycle): "
        f"elsai {best['elsai']:.3f}, strands {best['strands']:.3f} on disk; elsai on tmpfs "
        f"{best['elsai tmpfs']:.3f}; the write order alone {best['write order tmpfs']:.3f} on "
        f"tmpfs and {best['write order disk']:.3f} on disk. Floor of elsai's layer on disk = "
        f"{best['elsai tmpfs']:.3f} - {best['write order tmpfs']:.3f} + "
        f"{best['write order disk']:.3f} = {layer['floor']:.3f} ms "
        f"({layer['floor_ratio']:.2f} x strands; elsai at {layer['to_floor']:.2f} x its floor). "
        f"Files created per cycle: elsai {write_order.CREATES_PER_CYCLE['elsai']} (two messages, "
        f"two bookmark swaps), strands {write_order.CREATES_PER_CYCLE['strands']} (two messages, "
        "agent.json).",
    ]


def layer_met(layer: dict[str, Any]) -> bool:
    """0.5 x strands, or within 10 % of elsai's floor where that floor is above 0.5 x."""
    best = layer["best"]
    return target_met(best["elsai"], best["strands"], TARGET_LAYER, layer.get("floor"))
