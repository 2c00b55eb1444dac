"""`elsai console`: serve the web console on 127.0.0.1 (elsai.console) for a store and/or a jobs API.

A store (`--storage-dir`, `--s3`) gives the session pages, read-only; a jobs API (`--api-url`,
`--stack-name`, `--local`) gives the job pages and their acts, through the client and auth of
`elsai jobs`. Nothing opens a browser: the URL is printed.
"""

from __future__ import annotations

import argparse
import sys

from elsai.cli.catalog import Commands
from elsai.cli.sessions.store import CliError, open_store
from elsai.client import JobsApi, http_client, local_url, stack_api_url


def register(groups: Commands) -> None:
    """Add the `console` command."""
    parser = groups.add_parser(
        "console",
        help="a web console on 127.0.0.1: sessions, jobs, timelines, answer and cancel",
        description="Serve the web console on 127.0.0.1 (a free port unless --port).",
    )
    store = parser.add_mutually_exclusive_group()
    store.add_argument("--storage-dir", metavar="DIR", help="local session store")
    store.add_argument("--s3", metavar="s3://BUCKET/PREFIX", help="session store in S3")
    api = parser.add_mutually_exclusive_group()
    api.add_argument("--api-url", help="the jobs API's base URL (…/v1)")
    api.add_argument("--stack-name", help="read the ApiUrl output of this CloudFormation stack")
    api.add_argument("--local", action="store_true", help="the local API of `elsai jobs serve`")
    parser.add_argument("--region", help="AWS region (default: from the URL or your AWS config)")
    parser.add_argument("--port", type=_port, default=0, help="port (default: any free one)")
    parser.set_defaults(handler=_console)


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError("must be 0..65535")
    return value


def _client(args: argparse.Namespace) -> JobsApi | None:
    if args.local:
        return http_client(local_url(), sign=False)
    if args.api_url:
        return http_client(args.api_url, region=args.region)
    if args.stack_name:
        return http_client(stack_api_url(args.stack_name, args.region), region=args.region)
    return None


def _console(args: argparse.Namespace) -> int:
    from elsai.console.server import ConsoleServer
    from elsai.console.sources import Sources

    try:
        client = _client(args)
        wants_store = args.storage_dir or args.s3 or client is None
        store = open_store(args.storage_dir, args.s3) if wants_store else None
    except CliError as exc:
        print(f"elsai: {exc}", file=sys.stderr)
        return exc.exit_code
    except RuntimeError as exc:
        print(f"elsai: error: {exc}", file=sys.stderr)
        return 2
    server = ConsoleServer(Sources(store=store, jobs=client), port=args.port)
    print(f"elsai console on {server.url} (Ctrl-C stops it)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0
