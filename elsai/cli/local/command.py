"""`elsai local run`: the main job, offline.

It runs the synthesized state machine on moto, a Lambda killed mid-tool, the Step Functions
retry, and the checkpoint resume that completes the job. `--agent-factory` and
`--pythonpath` run a user's own agent instead of the template's, and `--answer` finishes a
job that stops for a person (exit code 4 while it waits).

It runs the CDK app of the current directory (its cdk.json), the way `cdk synth` would find
it; the runtime is `elsai.local` (the `local` extra).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from elsai.cli.catalog import Commands
from elsai.cli.local.answers import (
    EXIT_CODES_HELP,
    EXIT_USAGE,
    agent_options,
    exit_code,
    print_waiting,
    run_to_end,
)
from elsai.cli.local.graph import add_example_option, run_example
from elsai.cli.local.project import (
    add_project_options,
    load_project_service,
    local_extra_missing,
    needs_synth,
)
from elsai.cli.render import Style, job_heading, write

DEFAULT_PROMPT = "Process orders 1, 2 and 3"
EVENT_STYLES: dict[str, tuple[str, ...]] = {
    "killed": ("bold", "red"), "failed": ("bold", "red"), "slice_failed": ("red",), "retry": ("yellow",),
    "resumed": ("bold", "cyan"), "completed": ("bold", "green"), "tool": ("dim",), "parked": ("magenta",),
}  # fmt: skip


def register(groups: Commands) -> None:
    """Add `elsai local ...` to the CLI (the offline runtime, for trying a job without AWS)."""
    parser = groups.add_parser(
        "local", help="run jobs through the synthesized state machine on moto"
    )
    sub = groups.subcommands(parser, "local", dest="local_command", metavar="SUBCOMMAND")

    def usage(args: argparse.Namespace) -> int:  # `elsai local` alone: its help, a usage error
        parser.print_help()
        return 2

    parser.set_defaults(handler=usage)
    run = sub.add_parser(
        "run",
        help="run one job end to end on moto; by default its Lambda is killed mid-tool and the job still completes",
        description="Runs PROMPT as a job through the real (synthesized) Step Functions definition on a local moto "
        "server. The agent Lambda is the real handler in a child process; by default the first attempt is "
        "SIGKILLed inside its 2nd tool call, Step Functions retries it, and the checkpoint resumes it.",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_run_options(run)
    run.set_defaults(handler=_run)


def _caller(value: str) -> str:
    from elsai.local.shapes import caller_arn

    try:
        caller_arn(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def _add_run_options(run: argparse.ArgumentParser) -> None:
    """The options of `elsai local run`: prompt, fault injection, model, slicing, output."""
    run.add_argument(
        "prompt",
        nargs="?",
        default=DEFAULT_PROMPT,
        help=f"the job's prompt (default: {DEFAULT_PROMPT!r})",
    )
    run.add_argument(
        "--kill-in-tool",
        type=int,
        default=2,
        metavar="N",
        help="SIGKILL the Lambda inside the job's N-th tool run (default 2)",
    )
    run.add_argument("--no-kill", action="store_true", help="no fault injection")
    _add_agent_options(run)
    add_project_options(run)
    run.add_argument(
        "--model",
        choices=("scripted", "bedrock"),
        default="scripted",
        help="scripted (offline, default) or Amazon Bedrock",
    )
    run.add_argument(
        "--slice-seconds",
        type=float,
        metavar="S",
        help="stop each slice at the first loop boundary after S seconds (0: at every boundary)",
    )
    run.add_argument(
        "--fast-retries",
        action="store_true",
        help="1 s Retry waits instead of the template's backoff",
    )
    run.add_argument(
        "--cold-start",
        action="store_true",
        help="a fresh interpreter per Lambda invocation (~1 s slower each) instead of forking from a pre-imported server",
    )
    run.add_argument(
        "--timeout",
        type=float,
        default=300,
        help="give up waiting after this many seconds (default 300)",
    )
    run.add_argument(
        "--json", action="store_true", help="print one JSON summary instead of live progress"
    )
    run.add_argument("--no-color", action="store_true", help="never colour (also: NO_COLOR env)")
    add_example_option(run)  # --example graph (elsai/cli/local/graph.py)


def _add_agent_options(run: argparse.ArgumentParser) -> None:
    """Whose agent runs, in which session, and the answers to its interrupts."""
    run.add_argument(
        "--agent-factory",
        metavar="MODULE:FUNCTION",
        help="the agent factory the Lambda children call (default: the template's, example_agent:build_agent)",
    )
    run.add_argument(
        "--pythonpath",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory added to the children's import path (repeatable; kept after the checkout's own)",
    )
    run.add_argument("--session-id", help="the job's session id (default: a new one)")
    run.add_argument(
        "--caller",
        metavar="NAME",
        type=_caller,
        default=None,
        help="run the job as this local caller (an IAM user of the local account; default: "
        "local): with tenant isolation its job id and storage carry that caller's owner tag",
    )
    run.add_argument(
        "--answer",
        action="append",
        default=[],
        metavar="INTERRUPT_ID=JSON",
        help="the response to one interrupt, posted when the job asks it (repeatable)",
    )


def _bedrock_credentials() -> dict[str, str]:
    """The caller's real credentials, resolved before the runtime points boto3 at moto."""
    import boto3

    session = boto3.Session()
    creds = session.get_credentials()
    if creds is None:
        raise SystemExit(
            "elsai: error: --model bedrock needs AWS credentials (AWS_PROFILE, AWS_ACCESS_KEY_ID/..., or SSO); none were found"
        )
    frozen = creds.get_frozen_credentials()
    from elsai.models.bedrock_setup import resolve_region

    region = resolve_region()  # the SDK's one region rule: configured, else us-west-2
    out: dict[str, str] = {"AWS_ACCESS_KEY_ID": str(frozen.access_key), "AWS_SECRET_ACCESS_KEY": str(frozen.secret_key),
                           "AWS_DEFAULT_REGION": region, "AWS_REGION": region}  # fmt: skip
    if frozen.token:
        out["AWS_SESSION_TOKEN"] = frozen.token
    if os.environ.get("ELSAI_MODEL_ID"):  # e.g. an eu. inference profile for an EU region
        out["ELSAI_MODEL_ID"] = os.environ["ELSAI_MODEL_ID"]
    return out


def _prepare(
    args: argparse.Namespace,
) -> int | tuple[Path, Any, tuple[str, ...], dict[str, Any], Any]:
    """The project and its service, the agent options and `elsai.local`; an exit code if one is missing."""
    try:
        pythonpath, answers = agent_options(args)
    except ValueError as exc:
        print(f"elsai: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if local_extra_missing():
        return EXIT_USAGE
    import elsai.local as local

    if needs_synth(args) and not args.json:
        style = Style.for_stream(sys.stdout, no_color=args.no_color)
        print(
            style.paint("Synthesizing the CDK app (cached after the first run)…", "dim"), flush=True
        )
    loaded = load_project_service(args)
    if loaded is None:
        return EXIT_USAGE
    project, service = loaded
    return project, service, pythonpath, answers, local


def _run(args: argparse.Namespace) -> int:
    prepared = _prepare(args)
    if isinstance(prepared, int):
        return prepared
    if args.example:
        return run_example(args, prepared)
    project, service, pythonpath, answers, local = prepared
    LocalRuntime, kill_in_job_tool = local.LocalRuntime, local.kill_in_job_tool  # noqa: N806
    credentials = _bedrock_credentials() if args.model == "bedrock" else None
    style = Style.for_stream(sys.stdout, no_color=args.no_color)
    started = time.monotonic()

    def show(event: Any) -> None:
        if not args.json:
            stamp = style.paint(f"{time.monotonic() - started:6.1f}s", "dim")
            print(
                f"{stamp} {style.paint(event.line(), *EVENT_STYLES.get(event.kind, ()))}",
                flush=True,
            )

    if not args.json:
        print(style.paint("Starting moto…", "dim"), flush=True)
    timeout = margin = None
    if args.slice_seconds is not None:
        margin = 1000
        timeout = args.slice_seconds + margin / 1000
    faults = None if args.no_kill else kill_in_job_tool(args.kill_in_tool)
    with LocalRuntime(project=project, service=service, agent_factory=args.agent_factory, pythonpath=pythonpath, fast_retries=args.fast_retries, function_timeout_s=timeout, safety_margin_ms=margin,
                      faults=faults, on_event=show, bedrock_credentials=credentials, preloaded=not args.cold_start) as runtime:  # fmt: skip
        if not args.json:
            print(
                style.paint(
                    f"moto on {runtime.endpoint}; state machine {runtime.state_machine_arn}", "dim"
                ),
                flush=True,
            )
        if args.caller is not None:
            runtime.caller = args.caller
        job = runtime.jobs.start(args.prompt, session_id=args.session_id).as_dict()
        final = run_to_end(runtime, job["job_id"], answers, args.timeout).as_dict()
        summary = _summary(runtime, job, final)
    if args.json:
        print(json.dumps(summary, indent=2, default=str))
    else:
        _print_summary(summary, style)
        if summary["status"] == "WAITING_FOR_INPUT":
            print_waiting(summary, ["elsai", *sys.argv[1:]], style, answers)
    return exit_code(summary["status"])


def _summary(runtime: Any, job: dict[str, Any], final: dict[str, Any]) -> dict[str, Any]:
    records = runtime.slices(job["job_id"])
    ledger = [e for e in runtime.ledger() if e.get("job_id") == job["job_id"]]
    runs = Counter(
        f"{e['tool']}({', '.join(f'{k}={v!r}' for k, v in (e.get('input') or {}).items())})"
        for e in ledger
    )
    resumed = [{"slice": r.info.slice, "attempt": r.info.attempt, "position": r.result.get("resume_position")}
               for r in records if r.result and r.result.get("resumed_from_checkpoint")]  # fmt: skip
    return {
        "job_id": job["job_id"],
        "session_id": job["session_id"],
        "status": final["status"],
        "text": (final.get("result") or {}).get("text", ""),
        "error": final.get("error"),
        "interrupts": final.get("interrupts") or []
        if final["status"] == "WAITING_FOR_INPUT"
        else [],
        "slices": len({r.info.slice for r in records}),
        "attempts": len(records),
        "killed": [
            {"slice": r.info.slice, "attempt": r.info.attempt, "error": r.error.get("errorType")}
            for r in records
            if r.killed and r.error
        ],
        "failed": [
            {"slice": r.info.slice, "attempt": r.info.attempt, "error": r.error.get("errorType")}
            for r in records
            if r.error and not r.killed
        ],
        "resumed": resumed,
        "tool_runs": dict(runs),
        "session_files": [
            {"key": k, "bytes": n} for k, n in runtime.session_files(job["session_id"])
        ],
        "bookmark": _bookmark(runtime, job),
        **_state_path(runtime.history(job["job_id"])),
        "bucket": runtime.bucket,
        "storage_prefix": runtime.storage_prefix,  # the caller's owners/<tag>/ with isolation
        "events": [
            {"kind": e.kind, "slice": e.slice, "attempt": e.attempt, "message": e.message}
            for e in runtime.progress.events
        ],
    }


def _bookmark(runtime: Any, job: dict[str, Any]) -> dict[str, Any] | None:
    from elsai.session.layout import keys

    try:
        return dict(runtime.read_json(keys.checkpoint_key(job["session_id"], job["agent_id"])))
    except Exception:  # no bookmark (e.g. the job failed before its first boundary)
        return None


def _state_path(history: list[dict[str, Any]]) -> dict[str, Any]:
    """States entered, in order, and the task failures the Retry policy handled (from the execution history)."""
    states: list[str] = []
    for event in history:
        name = (event.get("stateEnteredEventDetails") or {}).get("name")
        if name:
            states.append(name)
    failures = [
        (e.get("taskFailedEventDetails") or {}).get("error")
        for e in history
        if e["type"] in ("TaskFailed", "TaskTimedOut")
    ]
    return {"states": states, "task_failures": failures}


def _cause_message(cause: Any) -> str:
    """A Lambda error Cause is the error JSON; show its message, not its stack trace."""
    try:
        return str(json.loads(cause)["errorMessage"])
    except (TypeError, ValueError, KeyError):
        return str(cause)


def _print_summary(s: dict[str, Any], style: Style) -> None:
    ok = s["status"] == "SUCCEEDED"
    write(job_heading(s["job_id"], s["status"], style))
    if s["text"]:
        print(f"  final text:   {s['text']}")
    if s["error"]:
        print(
            style.paint(
                f"  error:        {s['error'].get('error')}: {_cause_message(s['error'].get('cause'))}",
                "red",
            )
        )
    killed = (
        ", ".join(f"slice {k['slice']} attempt {k['attempt']} ({k['error']})" for k in s["killed"])
        or "none"
    )
    print(f"  slices:       {s['slices']} ({s['attempts']} Lambda attempts; killed: {killed})")
    path = (
        " -> ".join(s["states"])
        if len(s["states"]) <= 12
        else " -> ".join(s["states"][:5] + ["…"] + s["states"][-5:])
    )
    print(f"  states:       {path}")
    if s["task_failures"]:
        errors = ", ".join(f"{n}x {e}" for e, n in Counter(s["task_failures"]).items())
        print(
            f"  task errors:  {errors}"
            + (" (each retried by RunSlice's Retry policy)" if ok else "")
        )
    resumed = (
        ", ".join(
            f"{r['position']} (slice {r['slice']} attempt {r['attempt']})" for r in s["resumed"]
        )
        or "no resume needed"
    )
    print(f"  resumed from: {resumed}")
    print("  tool runs:" + ("" if s["tool_runs"] else "    none"))
    for call, count in s["tool_runs"].items():
        note = "  <- ran again: the killed attempt's result was never saved" if count > 1 else ""
        print(f"    {count} x {call}{style.paint(note, 'yellow') if note else ''}")
    if s["bookmark"]:
        b = s["bookmark"]
        print(f"  bookmark:     checkpoint.json execution_status={b.get('execution_status')} position={b.get('position')} "
              f"message_count={b.get('message_count')}")  # fmt: skip
    prefix = f"session_{s['session_id']}/"
    print(f"  session files in s3://{s['bucket']}/{s['storage_prefix']}{prefix} (moto):")
    for f in s["session_files"]:
        print(f"    {f['key'].removeprefix(prefix)}  ({f['bytes']} B)")
