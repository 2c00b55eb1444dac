"""Where elsai's session time goes: cProfile of the benchmark workloads (elsai side only).

    python -m bench.profile_elsai                 # file "both" on disk and tmpfs, then S3 resume
    python -m bench.profile_elsai --only file      # strands, elsai both fsync=False/True

Prints, per workload, the wall time, the top functions by own time, and the totals of the
system calls that dominate persistence (fsync, open, link, rename, flock) and of S3 calls.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import shutil
import sys
import tempfile
import time
from typing import Any

from bench import elsai_side, s3env, workload

WATCH = {
    "{built-in method posix.fsync}": "os.fsync",
    "{built-in method posix.open}": "os.open",
    "{built-in method posix.link}": "os.link",
    "{built-in method posix.replace}": "os.replace",
    "{built-in method posix.unlink}": "os.unlink",
    "{built-in method fcntl.flock}": "fcntl.flock",
    "{built-in method io.open}": "open()",
    "{built-in method posix.rename}": "os.rename",
    "{built-in method posix.mkdir}": "os.mkdir",
    "{built-in method posix.stat}": "os.stat",
}


def _watch_totals(stats: pstats.Stats) -> list[tuple[str, int, float]]:
    out = []
    for (filename, _line, name), (_cc, nc, tt, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        key = f"{{{name[1:-1]}}}" if name.startswith("<") else name
        label = WATCH.get(name) or WATCH.get(key)
        if filename == "~" and label:
            out.append((label, nc, tt))
    return sorted(out, key=lambda x: -x[2])


def _elsai_functions(stats: pstats.Stats, limit: int) -> list[tuple[str, int, float, float]]:
    rows = []
    for (filename, line, name), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if "/elsai/" in filename:
            rel = filename.split("/elsai/", 1)[1]
            rows.append((f"elsai/{rel}:{line}({name})", nc, tt, ct))
    return sorted(rows, key=lambda r: -r[3])[:limit]


def report(
    title: str, profile: cProfile.Profile, wall: float, cycles: int | None, limit: int = 18
) -> None:
    stats = pstats.Stats(profile)
    print(
        f"\n=== {title}: wall {wall * 1000:.1f} ms"
        + (f" ({wall / cycles * 1000:.3f} ms/cycle)" if cycles else "")
    )
    print("-- system calls (calls, total ms" + (", per cycle" if cycles else "") + ")")
    for label, calls, seconds in _watch_totals(stats):
        per = (
            f", {calls / cycles:.1f}/cycle {seconds / cycles * 1000:.3f} ms/cycle" if cycles else ""
        )
        print(f"   {label:12s} {calls:6d} calls {seconds * 1000:9.1f} ms{per}")
    print("-- elsai functions by cumulative time (calls, own ms, cumulative ms)")
    for name, calls, own, cum in _elsai_functions(stats, limit):
        print(f"   {cum * 1000:9.1f}  own {own * 1000:8.1f}  {calls:6d}x  {name}")
    buf = io.StringIO()
    pstats.Stats(profile, stream=buf).sort_stats("tottime").print_stats(12)
    print("-- top own time, all code")
    print(
        "\n".join(
            "   " + line for line in buf.getvalue().splitlines() if line.strip()[:1].isdigit()
        )
    )


def profile_file(
    cycles: int, base: str, position: str | None, fsync: bool = True, side_name: str = "elsai"
) -> None:
    """cProfile one invocation; `side_name="strands"` profiles strands' FileSessionManager the
    same way (same system-call totals), for a per-cycle syscall comparison."""
    from bench import strands_side

    storage = tempfile.mkdtemp(prefix="profile-", dir=base)
    try:
        if side_name == "elsai":
            agent: Any = elsai_side.make_agent(
                workload.script(cycles),
                session_manager=elsai_side.file_manager("p", storage, fsync=fsync),
                position=position,
            )
            title = f"elsai file position={position} fsync={fsync} on {base}"
            side: Any = elsai_side
        else:
            agent = strands_side.make_agent(
                workload.script(cycles), session_manager=strands_side.file_manager("p", storage)
            )
            title = f"strands FileSessionManager on {base}"
            side = strands_side
        os.sync()
        profile = cProfile.Profile()
        start = time.perf_counter()
        profile.enable()
        if side_name == "elsai":
            side.invoke(agent, workload.PROMPT)
        else:  # strands' __call__ runs the loop in a worker thread, which cProfile cannot see
            asyncio.run(agent.invoke_async(workload.PROMPT))
        profile.disable()
        report(title, profile, time.perf_counter() - start, cycles)
    finally:
        shutil.rmtree(storage, ignore_errors=True)


class CallTimeline:
    """Every S3 call made while enabled: (operation, key, start, end, thread), times from t0."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, float, float, str]] = []
        self.t0 = 0.0
        self.enabled = False

    def install(self) -> None:
        import threading

        from botocore.client import BaseClient

        original = BaseClient._make_api_call
        timeline = self

        def recorded(client: Any, op: str, params: Any) -> Any:
            if not timeline.enabled:
                return original(client, op, params)
            begin = time.perf_counter()
            try:
                return original(client, op, params)
            finally:
                key = str(params.get("Key") or params.get("Prefix") or "")
                timeline.calls.append(
                    (
                        op,
                        key.rsplit("/", 2)[-1] if "/messages/" not in key else "message",
                        begin - timeline.t0,
                        time.perf_counter() - timeline.t0,
                        threading.current_thread().name,
                    )
                )

        BaseClient._make_api_call = recorded  # type: ignore[method-assign]

    def start(self) -> None:
        self.calls = []
        self.t0 = time.perf_counter()
        self.enabled = True

    def stop(self) -> float:
        self.enabled = False
        return time.perf_counter() - self.t0

    def print(self, title: str, marks: dict[str, float]) -> None:
        print(f"\n=== S3 call timeline: {title} (ms from the start)")
        for name, at in marks.items():
            print(f"   mark {name:28s} {at * 1000:8.1f}")
        groups: dict[tuple[str, str], list[tuple[float, float]]] = {}
        order: list[tuple[str, str]] = []
        # Calls of one (operation, key) kind that overlap in time form one wave; a call that
        # starts after every call of the current wave has ended starts a new one.
        wave_end: dict[tuple[str, str], float] = {}
        wave_no: dict[tuple[str, str], int] = {}
        for op, key, begin, end, _thread in sorted(self.calls, key=lambda c: c[2]):
            kind = (op, key)
            if kind not in wave_end or begin > wave_end[kind]:
                wave_no[kind] = wave_no.get(kind, 0) + 1
                wave_end[kind] = end
            wave_end[kind] = max(wave_end[kind], end)
            group = (op, key if wave_no[kind] == 1 else f"{key} (wave {wave_no[kind]})")
            if group not in groups:
                groups[group] = []
                order.append(group)
            groups[group].append((begin, end))
        for group in order:
            spans = groups[group]
            first, last = min(b for b, _ in spans), max(e for _, e in spans)
            print(
                f"   {group[0]:14s} {group[1]:18s} x{len(spans):<5d} {first * 1000:8.1f} -> {last * 1000:8.1f}  "
                f"(sum of call times {sum(e - b for b, e in spans) * 1000:.1f})"
            )


def profile_resume(messages: int) -> None:
    from bench import strands_side

    server = s3env.MotoServer().start()
    try:
        s3env.configure_environment(server.endpoint)
        admin = s3env.admin_client()
        scratch = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
        snapshots = {}
        for side_name, side in (("elsai", elsai_side), ("strands", strands_side)):
            bucket = f"profile-{side_name}"
            s3env.create_bucket(admin, bucket)
            storage = tempfile.mkdtemp(prefix="profile-build-", dir=scratch)
            kwargs: dict[str, Any] = {"position": "both"} if side_name == "elsai" else {}
            agent = side.make_agent(
                workload.multi_invocation_script(messages // 100, 49),
                session_manager=side.file_manager("resume", storage),
                **kwargs,
            )
            for _ in range(messages // 100):
                side.invoke(agent, workload.PROMPT)
            s3env.upload_tree(admin, bucket, storage)
            shutil.rmtree(storage, ignore_errors=True)
            snapshots[side_name] = s3env.BucketSnapshot(admin, bucket)

        timeline = CallTimeline()
        timeline.install()

        reused = strands_side.ReusedClientSession()

        def resume(
            side_name: str, marks: dict[str, float] | None = None, boto_session: Any = None
        ) -> None:
            side = elsai_side if side_name == "elsai" else strands_side
            kwargs: dict[str, Any] = {"position": "both"} if side_name == "elsai" else {}
            t0 = time.perf_counter()
            manager = side.s3_manager("resume", f"profile-{side_name}", boto_session=boto_session)
            t1 = time.perf_counter()
            a = side.make_agent([workload.final_response("ok")], session_manager=manager, **kwargs)
            t2 = time.perf_counter()
            side.invoke(a, "again")
            t3 = time.perf_counter()
            if marks is not None:
                marks.update(
                    {
                        "session manager built": t1 - t0,
                        "agent built (session loaded)": t2 - t0,
                        "invocation done": t3 - t0,
                    }
                )

        for side_name, boto_session, note in (
            ("elsai", None, "its process-wide client, reused"),
            ("strands", None, "a new client per manager"),
            ("strands", reused, "a reused client"),
        ):
            resume(side_name, boto_session=boto_session)  # warm-up
            snapshots[side_name].restore()
            marks: dict[str, float] = {}
            timeline.start()
            resume(side_name, marks, boto_session=boto_session)
            timeline.stop()
            timeline.print(
                f"{side_name} resume of {messages} messages (default window; {note})", marks
            )
            snapshots[side_name].restore()

        profile = cProfile.Profile()
        start = time.perf_counter()
        profile.enable()
        resume("elsai")
        profile.disable()
        wall = time.perf_counter() - start
        snapshots["elsai"].restore()
        report(
            f"elsai S3 resume of {messages} messages (default window), main thread only",
            profile,
            wall,
            None,
            limit=12,
        )
    finally:
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=["file", "resume"])
    parser.add_argument("--cycles", type=int, default=200)
    parser.add_argument("--messages", type=int, default=1000)
    args = parser.parse_args()
    if args.only in (None, "file"):
        for base in [tempfile.gettempdir(), "/dev/shm"]:
            if os.path.isdir(base):
                profile_file(args.cycles, base, None, side_name="strands")
                for fsync in (False, True):
                    profile_file(args.cycles, base, "both", fsync)
    if args.only in (None, "resume"):
        profile_resume(args.messages)
    return 0


if __name__ == "__main__":
    sys.exit(main())
