"""Per-cycle session overhead on local files: elsai (each checkpoint position, fsync on and off)
against strands-agents' FileSessionManager, each also without a session manager (the baseline).

Part of `python -m bench.run_all` (section 1 of results/README.md); see bench/README.md.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
from dataclasses import dataclass
from typing import Any

from bench import elsai_side, strands_side, workload
from bench.common import fs_type, log, rotated, timed
from bench.layer_timer import LayerTimer

SIDES: dict[str, Any] = {"elsai": elsai_side, "strands": strands_side}


@dataclass(frozen=True)
class FileVariant:
    label: str
    side: str
    location: str | None  # None: no session manager at all (the baseline)
    position: str | None = None
    fsync: bool = True  # elsai only: FileSessionManager(fsync=...)


POSITIONS: tuple[str | None, ...] = ("both", "after_tools", None)


def elsai_file_label(loc: str, position: str | None, fsync: bool) -> str:
    return f"elsai / {loc} / {position or 'no checkpoint'} / fsync={fsync}"


def ratio_key(loc: str, position: str | None, fsync: bool) -> str:
    return f"{loc} / {position or 'no checkpoint'} / fsync={fsync}"


def _run_file_variant(
    v: FileVariant, cycles: int, locations: dict[str, str]
) -> tuple[float, LayerTimer | None]:
    """(wall seconds of the invocation, the session-layer timer or None)."""
    side = SIDES[v.side]
    responses = workload.script(cycles)
    storage_dir = None
    manager = None
    if v.location is not None:
        storage_dir = tempfile.mkdtemp(prefix=f"bench-{v.side}-", dir=locations[v.location])
        manager = (
            side.file_manager("overhead", storage_dir, fsync=v.fsync)
            if v.side == "elsai"
            else side.file_manager("overhead", storage_dir)
        )
    kwargs: dict[str, Any] = {"session_manager": manager}
    if v.side == "elsai":
        kwargs["position"] = v.position
    agent = side.make_agent(responses, **kwargs)
    layer = side.time_session_layer(agent, LayerTimer()) if manager is not None else None
    # Start every run with no dirty pages: strands does not fsync, and on ext4 the next fsync
    # (often elsai's, in the following run) would otherwise pay for flushing its files.
    os.sync()
    try:
        seconds, stop = timed(lambda: side.invoke(agent, workload.PROMPT))
        if stop != "end_turn":
            raise RuntimeError(f"{v.label}: invocation ended with {stop!r}")
        if storage_dir is not None:  # the session really holds every message
            folder = os.path.join(
                storage_dir, "session_overhead", "agents", "agent_bench", "messages"
            )
            stored = [m for m in os.listdir(folder) if not m.startswith(".")]
            if len(stored) != workload.messages_written(cycles):
                raise RuntimeError(
                    f"{v.label}: {len(stored)} message files stored, expected {workload.messages_written(cycles)}"
                )
        return seconds, layer
    finally:
        if storage_dir is not None:
            shutil.rmtree(storage_dir, ignore_errors=True)


def bench_overhead(cycles: int, repeats: int, locations: dict[str, str]) -> dict[str, Any]:
    baselines = {side: FileVariant(f"{side} / no session", side, None) for side in SIDES}
    variants: list[FileVariant] = []
    for loc in locations:
        variants.append(FileVariant(f"strands / {loc}", "strands", loc))
        for fsync in (False, True):
            for pos in POSITIONS:
                variants.append(
                    FileVariant(elsai_file_label(loc, pos, fsync), "elsai", loc, pos, fsync)
                )
    for v in [*baselines.values(), *variants]:  # warm-up: imports, caches, first-call costs
        _run_file_variant(v, 5, locations)
    samples: dict[str, list[float]] = {v.label: [] for v in [*baselines.values(), *variants]}
    layer: dict[str, list[float]] = {v.label: [] for v in variants}
    by_method: dict[str, list[dict[str, float]]] = {v.label: [] for v in variants}
    paired: dict[str, list[float]] = {v.label: [] for v in variants}
    for r in range(repeats):
        # Each session run is paired with a run of the same SDK without a session right before
        # it, so the difference compares runs made under the same machine conditions.
        for v in rotated(variants, r):
            base, _ = _run_file_variant(baselines[v.side], cycles, locations)
            wall, inside = _run_file_variant(v, cycles, locations)
            samples[baselines[v.side].label].append(base)
            samples[v.label].append(wall)
            paired[v.label].append(wall - base)
            layer[v.label].append(inside.seconds if inside else 0.0)
            by_method[v.label].append(dict(inside.seconds_by_method) if inside else {})
        log(f"  overhead: repeat {r + 1}/{repeats} done")

    def med(label: str) -> float:
        return statistics.median(samples[label])

    rows = []
    for v in [*baselines.values(), *variants]:
        session = v.location is not None
        rows.append(
            {
                "variant": v.label,
                "side": v.side,
                "location": v.location,
                "position": v.position,
                "fsync": v.fsync if v.side == "elsai" and session else None,
                "median_s": med(v.label),
                "min_s": min(samples[v.label]),
                "max_s": max(samples[v.label]),
                "ms_per_cycle": med(v.label) / cycles * 1000,
                # median over repeats of (run with session - paired run without) / cycles
                "overhead_ms_per_cycle": statistics.median(paired[v.label]) / cycles * 1000
                if session
                else None,
                # wall time spent inside the session layer / cycles (median of the repeats)
                "in_layer_ms_per_cycle": statistics.median(layer[v.label]) / cycles * 1000
                if session
                else None,
                "samples_s": samples[v.label],
                "paired_differences_s": paired.get(v.label),
                "in_layer_samples_s": layer.get(v.label),
                # median over repeats of the time in each session-layer method / cycles
                "in_layer_ms_per_cycle_by_method": {
                    name: statistics.median(m.get(name, 0.0) for m in by_method[v.label])
                    / cycles
                    * 1000
                    for name in sorted({n for m in by_method[v.label] for n in m})
                }
                if session
                else None,
            }
        )
    by_label = {row["variant"]: row for row in rows}
    ratios = {}
    durability = {}
    for loc in locations:
        strands = by_label[f"strands / {loc}"]
        for fsync in (False, True):
            for pos in POSITIONS:
                elsai = by_label[elsai_file_label(loc, pos, fsync)]
                ratios[ratio_key(loc, pos, fsync)] = {
                    "location": loc,
                    "position": pos,
                    "fsync": fsync,
                    "in_layer_ratio": elsai["in_layer_ms_per_cycle"]
                    / strands["in_layer_ms_per_cycle"],
                    "overhead_ratio": elsai["overhead_ms_per_cycle"]
                    / strands["overhead_ms_per_cycle"]
                    if strands["overhead_ms_per_cycle"] > 0
                    else None,
                    "total_ratio": elsai["median_s"] / strands["median_s"],
                }
        for pos in POSITIONS:
            on = by_label[elsai_file_label(loc, pos, True)]
            off = by_label[elsai_file_label(loc, pos, False)]
            # The price of power-loss durability: what fsync=True adds per cycle.
            durability[f"{loc} / {pos or 'no checkpoint'}"] = {
                "in_layer_ms_per_cycle": on["in_layer_ms_per_cycle"] - off["in_layer_ms_per_cycle"],
                "overhead_ms_per_cycle": on["overhead_ms_per_cycle"] - off["overhead_ms_per_cycle"],
                "fsync_true_over_false_in_layer": on["in_layer_ms_per_cycle"]
                / off["in_layer_ms_per_cycle"],
            }
    return {
        "cycles": cycles,
        "repeats": repeats,
        "locations": {loc: {"dir": path, "fs": fs_type(path)} for loc, path in locations.items()},
        "rows": rows,
        "ratios": ratios,
        "fsync_price": durability,
    }
