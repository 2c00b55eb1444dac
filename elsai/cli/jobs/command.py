"""`elsai jobs`: start, follow, answer, cancel and list jobs of the deployed service or the local one.

The same client talks to both: API Gateway (SigV4-signed with botocore and the usual
credential chain; `--api-url` or `--stack-name` to read the stack's ApiUrl output) and the
local API of `elsai jobs serve` (`--local`: the synthesized state machine on moto behind a
real HTTP server on 127.0.0.1), so the output is the same.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from elsai.cli.catalog import Commands
from elsai.cli.jobs.follow import EXIT_CODES, Follower
from elsai.cli.jobs.retry import EXIT_GAVE_UP, RetryPolicy
from elsai.client import ApiError, JobsApi, http_client, local_url, stack_api_url
from elsai.serverless.contract.jobs_api import Body, JobPage, ListedJob

FOLLOW_EXIT_CODES = (
    "exit codes when following: 0 succeeded, 1 failed or timed out, 2 refused request, "
    "3 cancelled or aborted, 4 waiting for input, "
    f"{EXIT_GAVE_UP} lost contact with the API for --retry-for seconds (the job may still be "
    "running: check it with `elsai jobs status ID`)"
)


def register(groups: Commands) -> None:
    """Add the `jobs` command group."""
    parser = groups.add_parser(
        "jobs", help="start, follow, answer, cancel and list jobs (deployed or --local)"
    )
    commands = groups.subcommands(parser, "jobs", dest="jobs_command", metavar="COMMAND")
    commands.required = True
    start = _command(commands, "start", "start a job", _start)
    start.add_argument("prompt")
    start.add_argument("--session", metavar="ID", help="continue this session (default: a new one)")
    start.add_argument("--agent", metavar="ID", default="agent", help="agent id (default: agent)")
    start.add_argument(
        "--idempotency-key", metavar="K", help="retrying with the same key starts nothing new"
    )
    start.add_argument(
        "--follow", action="store_true", help="follow it to the end (exit code = outcome)"
    )
    _retry_option(start)
    start.epilog = FOLLOW_EXIT_CODES
    _command(commands, "status", "a job's status, result or error", _status).add_argument("job_id")
    follow = _command(
        commands, "follow", "live progress until the job ends or waits for input", _follow
    )
    follow.add_argument("job_id")
    _retry_option(follow)
    follow.epilog = FOLLOW_EXIT_CODES
    answer = _command(commands, "answer", "answer a job's pending interrupts", _answer)
    answer.add_argument("job_id")
    answer.add_argument(
        "--interrupt",
        metavar="IID",
        action="append",
        required=True,
        help="interrupt id (repeat with --response)",
    )
    answer.add_argument(
        "--response", metavar="JSON", action="append", required=True, help="its answer as JSON"
    )
    _command(commands, "cancel", "stop a running job", _cancel).add_argument("job_id")
    _command(
        commands, "upgrade", "move a running job to the current version at its next resume",
        _upgrade,
    ).add_argument("job_id")  # fmt: skip
    ls = _command(commands, "ls", "jobs, newest first", _ls)
    ls.add_argument("--limit", type=int, default=20)
    ls.add_argument(
        "--stale", action="store_true", help="only running jobs on an older agent version"
    )
    ls.add_argument("--status", help="only RUNNING, SUCCEEDED, FAILED, TIMED_OUT or ABORTED jobs")
    from elsai.cli.jobs.serve import add_serve

    add_serve(commands)


def _retry_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--retry-for",
        metavar="SECONDS",
        type=float,
        default=RetryPolicy.give_up_after,
        help="keep retrying an unreachable or failing (429/5xx) API this long before giving up "
        f"with exit code {EXIT_GAVE_UP} (default: %(default)g)",
    )


def _command(commands: Any, name: str, help_text: str, handler: Any) -> argparse.ArgumentParser:
    sub: argparse.ArgumentParser = commands.add_parser(name, help=help_text, description=help_text)
    where = sub.add_mutually_exclusive_group()
    where.add_argument("--api-url", help="the API's base URL (…/v1)")
    where.add_argument("--stack-name", help="read the ApiUrl output of this CloudFormation stack")
    where.add_argument("--local", action="store_true", help="the local API of `elsai jobs serve`")
    sub.add_argument(
        "--caller",
        metavar="NAME",
        help="with --local: act as this local caller (tenant isolation: each sees only its own "
        "jobs and sessions; default: local)",
    )
    sub.add_argument("--region", help="AWS region (default: from the URL or your AWS config)")
    sub.add_argument("--json", action="store_true", help="JSON (lines) instead of text")
    sub.set_defaults(handler=lambda args: _guarded(handler, args))
    return sub


def client_for(args: argparse.Namespace) -> JobsApi:
    """The client the location flags name (exactly one of them is needed)."""
    caller = getattr(args, "caller", None)
    if caller is not None and not args.local:
        raise SystemExit(
            "elsai: error: --caller only applies to --local: a deployed API knows its caller "
            "from the request's signature (use that caller's AWS credentials instead)"
        )
    if args.local:
        if caller is not None:
            _check_caller(caller)
        return http_client(local_url(), sign=False, caller=caller)
    if args.api_url:
        return http_client(args.api_url, region=args.region)
    if args.stack_name:
        return http_client(stack_api_url(args.stack_name, args.region), region=args.region)
    raise SystemExit(
        "elsai: error: say where the API is: --api-url URL, --stack-name NAME or --local"
    )


def _check_caller(caller: str) -> None:
    from elsai.local.shapes import caller_arn

    try:
        caller_arn(caller)
    except ValueError as exc:
        raise SystemExit(f"elsai: error: --caller: {exc}") from None


def _guarded(handler: Any, args: argparse.Namespace) -> int:
    try:
        return int(handler(args, client_for(args)) or 0)
    except ApiError as exc:
        print(f"elsai: error: {exc.message} (HTTP {exc.status})", file=sys.stderr)
        return 2 if exc.status < 500 else 1


def _print(args: argparse.Namespace, body: Body, text: str) -> None:
    """`text`, or with --json the API's body as it came."""
    print(json.dumps(body.as_dict(), ensure_ascii=False) if args.json else text)


def _start(args: argparse.Namespace, client: JobsApi) -> int:
    job = client.start(args.prompt, session_id=args.session, agent_id=args.agent,
                       idempotency_key=args.idempotency_key)  # fmt: skip
    _print(args, job, f"job {job.job_id} {job.status} (session {job.session_id})")
    if args.follow:
        retry = RetryPolicy(give_up_after=args.retry_for)
        return Follower(client, job.job_id, sys.stdout, as_json=args.json, retry=retry).run()
    return 0


def _status(args: argparse.Namespace, client: JobsApi) -> int:
    job = client.get(args.job_id)
    lines = [
        f"job {job.job_id}: {job.status}",
        f"session {job.session_id}, started {job.started_at}",
    ]
    if job.version:
        current = "current" if job.version_is_current in (True, None) else "not current"
        lines.append(
            f"version {job.version} ({current}; latest {job.current_version or '?'}, "
            f"policy {job.version_policy or 'pinned'})"
        )
    if isinstance(job.result, dict) and job.result.get("text"):
        lines.append(f"result: {job.result['text']}")
    if job.error:
        lines.append(f"error: {job.error.error}: {job.error.cause}")
    for interrupt in job.interrupts or []:
        lines.append(f"waiting on {interrupt.id}: {interrupt.name} {json.dumps(interrupt.reason)}")
    _print(args, job, "\n".join(lines))
    return 0


def _follow(args: argparse.Namespace, client: JobsApi) -> int:
    retry = RetryPolicy(give_up_after=args.retry_for)
    return Follower(client, args.job_id, sys.stdout, as_json=args.json, retry=retry).run()


def _answer(args: argparse.Namespace, client: JobsApi) -> int:
    if len(args.interrupt) != len(args.response):
        raise SystemExit("elsai: error: give one --response per --interrupt")
    responses = []
    for iid, raw in zip(args.interrupt, args.response, strict=True):
        try:
            responses.append({"id": iid, "response": json.loads(raw)})
        except ValueError as exc:
            raise SystemExit(f"elsai: error: --response for {iid} is not JSON: {exc}") from None
    out = client.answer(args.job_id, responses)
    _print(args, out, f"job {args.job_id}: answered {', '.join(out.answered)}")
    return 0


def _cancel(args: argparse.Namespace, client: JobsApi) -> int:
    out = client.cancel(args.job_id)
    _print(args, out, f"job {args.job_id}: {out.status}")
    return EXIT_CODES["SUCCEEDED"]


def _upgrade(args: argparse.Namespace, client: JobsApi) -> int:
    out = client.upgrade(args.job_id)
    done = out.event or f"already on version {out.version}"
    _print(args, out, f"job {args.job_id}: {done}")
    return 0


def _ls(args: argparse.Namespace, client: JobsApi) -> int:
    page = client.list(limit=args.limit, status="RUNNING" if args.stale else args.status)
    if args.stale:  # the listing names no versions: ask each running job (at most --limit)
        stale = [client.get(j.job_id) for j in page.jobs]
        page = JobPage(jobs=[ListedJob.model_validate(j.as_dict()) for j in stale
                             if j.version_is_current is False], cursor=page.cursor)  # fmt: skip
    rows = [f"{j.job_id:<50} {j.status:<18} {j.started_at}" for j in page.jobs]
    _print(args, page, "\n".join(rows) if rows else "no jobs")
    return 0
