"""Where elsai's session time goes: cProfile of the benchmark workloads (elsai side only).

    python -m bench.profile_elsai                 # file "both" on disk and tmpfs, then S3 resume
    python -m bench.profile_elsai --only file

Prints, per workload, the wall time, the top functions by own time, and the totals of the
system calls that dominate persistence (fsync, open, link, rename, flock) and of S3 calls.
"""

from __future__ import annotations

import argparse
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
}


def _watch_totals(stats: pstats.Stats) -> list[tuple[str, int, float]]:
    out = []
    for (filename, line, name), (cc, nc, tt, ct, callers) in stats.stats.items():  # type: ignore[attr-defined]
        key = f"{{{name[1:-1]}}}" if name.startswith("<") else name
        label = WATCH.get(name) or WATCH.get(key)
        if filename == "~" and label:
            out.append((label, nc, tt))
    return sorted(out, key=lambda x: -x[2])


def _elsai_functions(stats: pstats.Stats, limit: int) -> list[tuple[str, int, float, float]]:
    rows = []
    for (filename, line, name), (cc, nc, tt, ct, callers) in stats.stats.items():  # type: ignore[attr-defined]
        if "/elsai/" in filename:
            rel = filename.split("/elsai/", 1)[1]
            rows.append((f"elsai/{rel}:{line}({name})", nc, tt, ct))
    return sorted(rows, key=lambda r: -r[3])[:limit]


def report(title: str, profile: cProfile.Profile, wall: float, cycles: int | None, limit: int = 18) -> None:
    stats = pstats.Stats(profile)
    print(f"\n=== {title}: wall {wall * 1000:.1f} ms" + (f" ({wall / cycles * 1000:.3f} ms/cycle)" if cycles else ""))
    print("-- system calls (calls, total ms" + (", per cycle" if cycles else "") + ")")
    for label, calls, seconds in _watch_totals(stats):
        per = f", {calls / cycles:.1f}/cycle {seconds / cycles * 1000:.3f} ms/cycle" if cycles else ""
        print(f"   {label:12s} {calls:6d} calls {seconds * 1000:9.1f} ms{per}")
    print("-- elsai functions by cumulative time (calls, own ms, cumulative ms)")
    for name, calls, own, cum in _elsai_functions(stats, limit):
        print(f"   {cum * 1000:9.1f}  own {own * 1000:8.1f}  {calls:6d}x  {name}")
    buf = io.StringIO()
    pstats.Stats(profile, stream=buf).sort_stats("tottime").print_stats(12)
    print("-- top own time, all code")
    print("\n".join("   " + line for line in buf.getvalue().splitlines() if line.strip()[:1].isdigit()))


def profile_file(cycles: int, base: str, position: str | None) -> None:
    storage = tempfile.mkdtemp(prefix="profile-", dir=base)
    try:
        agent = elsai_side.make_agent(
            workload.script(cycles), session_manager=elsai_side.file_manager("p", storage), position=position
        )
        profile = cProfile.Profile()
        start = time.perf_counter()
        profile.enable()
        elsai_side.invoke(agent, workload.PROMPT)
        profile.disable()
        report(f"elsai file position={position} on {base}", profile, time.perf_counter() - start, cycles)
    finally:
        shutil.rmtree(storage, ignore_errors=True)


def profile_resume(messages: int) -> None:
    server = s3env.MotoServer().start()
    try:
        s3env.configure_environment(server.endpoint)
        admin = s3env.admin_client()
        s3env.create_bucket(admin, "profile")
        scratch = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
        storage = tempfile.mkdtemp(prefix="profile-build-", dir=scratch)
        per = 49
        agent = elsai_side.make_agent(
            workload.multi_invocation_script(messages // 100, per),
            session_manager=elsai_side.file_manager("resume", storage),
            position="both",
        )
        for _ in range(messages // 100):
            elsai_side.invoke(agent, workload.PROMPT)
        s3env.upload_tree(admin, "profile", storage)
        shutil.rmtree(storage, ignore_errors=True)
        snapshot = s3env.BucketSnapshot(admin, "profile")

        def resume() -> Any:
            manager = elsai_side.s3_manager("resume", "profile")
            a = elsai_side.make_agent([workload.final_response("ok")], session_manager=manager, position="both")
            elsai_side.invoke(a, "again")

        resume()  # warm-up
        snapshot.restore()
        t = time.perf_counter()
        for _ in range(3):
            resume()
            snapshot.restore()
        print(f"\n(unprofiled resume: {(time.perf_counter() - t) / 3 * 1000:.1f} ms incl. restore)")
        profile = cProfile.Profile()
        start = time.perf_counter()
        profile.enable()
        resume()
        profile.disable()
        wall = time.perf_counter() - start
        report(f"elsai S3 resume of {messages} messages (default window)", profile, wall, None, limit=25)
        buf = io.StringIO()
        st = pstats.Stats(profile, stream=buf)
        st.sort_stats("cumulative").print_stats(r"boto3/session.py|botocore/session.py|client.py:\d+\(create_client|_make_api_call|read_many|_load\b|ensure_session|thread.py")
        print("-- selected cumulative entries")
        print("\n".join("   " + line for line in buf.getvalue().splitlines() if line.strip()[:1].isdigit()))
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
                for position in ("both", None):
                    profile_file(args.cycles, base, position)
    if args.only in (None, "resume"):
        profile_resume(args.messages)
    return 0


if __name__ == "__main__":
    sys.exit(main())
