"""`elsai local run` with your own agent, and `--answer`: finish a waiting job from the CLI.

The local runtime lives only as long as the command, so a second run replays the job from
the start on a fresh moto; interrupt ids are derived from the tool call, the interrupt's
name, its order among the call's asks and its reason, so the same job asks the same ids
again and the answers given on the command line are posted as soon as it asks.
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from elsai.cli.render import Style

if TYPE_CHECKING:
    from elsai.local.runtime import LocalRuntime
    from elsai.serverless.contract.jobs_api import Job

EXIT_SUCCEEDED, EXIT_FAILED, EXIT_USAGE, EXIT_WAITING = 0, 1, 2, 4
EXIT_CODES_HELP = """exit codes:
  0  the job SUCCEEDED
  1  the job failed (FAILED, TIMED_OUT, ABORTED, CANCELLED)
  2  bad usage (options, no checkout, missing dev extra)
  4  the job is WAITING_FOR_INPUT: it printed the interrupt ids; run again with
     --answer INTERRUPT_ID=JSON for each (and the same --session-id) to finish it"""


def agent_options(args: argparse.Namespace) -> tuple[tuple[str, ...], dict[str, Any]]:
    """--pythonpath as absolute paths and --answer parsed; a bad value is a ValueError."""
    factory = args.agent_factory
    if factory is not None:
        module, sep, function = factory.partition(":")
        if not (sep and module.strip() and function.strip()):
            raise ValueError(f"--agent-factory {factory!r}: expected MODULE:FUNCTION")
    paths = []
    for raw in args.pythonpath:
        path = Path(raw).expanduser().resolve()
        if not path.is_dir():
            raise ValueError(f"--pythonpath {raw!r}: not a directory")
        paths.append(str(path))
    return tuple(paths), parse_answers(args.answer)


def parse_answers(values: list[str] | None) -> dict[str, Any]:
    """`ID=JSON` pairs to {id: response}; a malformed one is a ValueError naming it."""
    answers: dict[str, Any] = {}
    for value in values or []:
        interrupt_id, sep, raw = value.partition("=")
        if not sep or not interrupt_id.strip():
            raise ValueError(f"--answer {value!r}: expected INTERRUPT_ID=JSON")
        try:
            answers[interrupt_id.strip()] = json.loads(raw)
        except ValueError as exc:
            raise ValueError(
                f"--answer {value!r}: the response is not JSON ({exc}); a string needs quotes, "
                f"e.g. {interrupt_id}='\"approve\"'"
            ) from None
    return answers


def run_to_end(runtime: LocalRuntime, job_id: str, answers: dict[str, Any], timeout: float) -> Job:
    """Wait for the job; answer each wait whose interrupts all have answers; return the last state."""
    while True:
        state = runtime.wait(job_id, timeout=timeout)
        if state.status != "WAITING_FOR_INPUT":
            return state
        pending = [i.id for i in state.interrupts or []]
        if not pending or any(i not in answers for i in pending):
            return state
        runtime.jobs.answer(job_id, [{"id": i, "response": answers[i]} for i in pending])


def exit_code(status: str) -> int:
    """0 succeeded, 4 waiting for input, 1 anything else."""
    if status == "SUCCEEDED":
        return EXIT_SUCCEEDED
    return EXIT_WAITING if status == "WAITING_FOR_INPUT" else EXIT_FAILED


def print_waiting(
    summary: dict[str, Any], rerun: list[str], style: Style, answers: dict[str, Any]
) -> None:
    """The interrupts a waiting job asks, and the command that answers them."""
    interrupts = summary.get("interrupts") or []
    unused = sorted(set(answers) - {str(i["id"]) for i in interrupts})
    if unused:
        print(style.paint(f"  --answer ids this wait does not ask: {', '.join(unused)}", "yellow"))
    print(style.paint(f"  waiting for {len(interrupts)} answer(s):", "bold", "magenta"))
    for i in interrupts:
        print(f"    {i['id']}  {i.get('name')}  reason: {json.dumps(i.get('reason'), default=str)}")
    flags = ["--session-id", str(summary["session_id"])]
    for i in interrupts:
        flags += ["--answer", f"{i['id']}=JSON"]
    print("  answer with (JSON, e.g. '\"approve\"' or '{\"ok\": true}'):")
    print("    " + shlex.join([*_without_session(rerun), *flags]))


def _without_session(argv: list[str]) -> list[str]:
    """The command as typed, minus any --session-id/--answer (the hint adds its own)."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in ("--session-id", "--answer"):
            skip = True
            continue
        if arg.startswith(("--session-id=", "--answer=")):
            continue
        out.append(arg)
    return out
