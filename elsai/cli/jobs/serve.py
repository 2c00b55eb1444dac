"""`elsai jobs serve`: the jobs API on 127.0.0.1, backed by the local runtime.

The synthesized state machine runs on moto, each agent Lambda invocation is the real handler
in a child process, and the real API handler answers HTTP requests through
`elsai.local.LocalHttpApi`. The URL is written to `local_state_file()` so that
`elsai jobs --local ...` in another shell finds it. Runs until Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from elsai.cli.catalog import Commands
from elsai.client import local_state_file
from elsai.serverless.contract.steps import RUN_SLICE


def add_serve(commands: Commands) -> None:
    """Add `serve` to the `jobs` group."""
    from elsai.cli.local.project import add_project_options  # the same options as `local run`

    serve = commands.add_parser(
        "serve", help="serve the jobs API locally (moto + the real handlers)"
    )
    serve.add_argument(
        "--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)"
    )
    serve.add_argument(
        "--agent-factory", metavar="MODULE:FN", help="the agent factory (default: the template's)"
    )
    serve.add_argument(
        "--pythonpath",
        metavar="DIR",
        action="append",
        default=[],
        help="import path for the factory",
    )
    serve.add_argument(
        "--child-env", metavar="K=V", action="append", default=[], help="environment for the agent"
    )
    serve.add_argument(
        "--tool-seconds",
        type=float,
        help="each tool call first waits this long (try follow/cancel)",
    )
    serve.add_argument(
        "--fast-retries",
        action="store_true",
        help="1 s Retry waits instead of the template's backoff",
    )
    add_project_options(serve)
    serve.set_defaults(handler=_serve)


def _runtime(args: argparse.Namespace, project: Path, service: Any) -> Any:
    from elsai.local import Fault, InvocationInfo, LocalRuntime

    env = {}
    for pair in args.child_env:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise SystemExit(f"elsai: error: --child-env wants K=V, got {pair!r}")
        env[name] = value
    faults = None
    if args.tool_seconds:

        def faults(info: InvocationInfo) -> Fault | None:
            return Fault(tool_seconds=args.tool_seconds) if info.action == RUN_SLICE else None

    paths = tuple(str(Path(p).resolve()) for p in args.pythonpath)
    return LocalRuntime(project=project, service=service, agent_factory=args.agent_factory, fast_retries=args.fast_retries,
                        faults=faults, child_env=env, pythonpath=paths)  # fmt: skip


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # SIGTERM stops the server the way Ctrl-C does: with cleanup


def _serve(args: argparse.Namespace) -> int:
    from elsai.cli.local.project import EXIT_USAGE, load_project_service, local_extra_missing

    if local_extra_missing():
        return EXIT_USAGE
    loaded = load_project_service(args)
    if loaded is None:
        return EXIT_USAGE
    project, service = loaded
    for path in args.pythonpath:
        sys.path.insert(0, str(Path(path).resolve()))
    from elsai.local import LocalHttpApi

    signal.signal(signal.SIGTERM, _interrupt)
    state = local_state_file()
    with _runtime(args, project, service) as runtime:
        server = LocalHttpApi(runtime, port=args.port)
        state.parent.mkdir(parents=True, exist_ok=True)
        state.write_text(json.dumps({"url": server.url, "pid": os.getpid()}))
        print(f"serving the local jobs API on {server.url} (Ctrl-C stops it)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.close()
            if state.exists() and json.loads(state.read_text()).get("pid") == os.getpid():
                state.unlink()
    return 0
