"""Which service `elsai local run` and `elsai jobs serve` run, and the options that choose it.

In order: ``--template FILE`` or ``--cdk-out DIR`` (something already synthesized), else the
CDK app in the current directory (its cdk.json, synthesized and cached), else, outside any CDK
app and only with ``--agent-factory``, the default service template shipped in the wheel.
``--service ID`` picks one of several DurableAgentServices.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from elsai.cli.local.answers import EXIT_USAGE

__all__ = ["EXIT_USAGE", "add_project_options", "load_project_service", "local_extra_missing"]


def add_project_options(parser: argparse.ArgumentParser) -> None:
    """--cdk-out / --template / --service: run something other than the cwd's one service."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--cdk-out",
        metavar="DIR",
        type=Path,
        help="a cloud assembly `cdk synth` already wrote, instead of synthesizing the cwd's app",
    )
    where.add_argument(
        "--template",
        metavar="FILE",
        type=Path,
        help="a synthesized *.template.json (its code: --pythonpath)",
    )
    parser.add_argument(
        "--service",
        metavar="ID",
        help="which DurableAgentService when the app holds several (construct id or path)",
    )


def needs_synth(args: argparse.Namespace) -> bool:
    """Whether loading will run the cwd's CDK app (worth a line of progress first)."""
    return not (args.template or args.cdk_out) and (Path.cwd() / "cdk.json").is_file()


def load_project_service(args: argparse.Namespace) -> Any:
    """(project dir, SynthesizedService), or None after one line on stderr saying how to fix it."""
    from elsai.local.template import (
        ProjectError,
        default_service,
        load_cdk_out,
        load_service,
        load_template,
    )

    here = Path.cwd()
    try:
        if args.template:
            return here, load_template(args.template, service=args.service)
        if args.cdk_out:
            return here, load_cdk_out(args.cdk_out, service=args.service)
        if (here / "cdk.json").is_file():
            return here, load_service(here, service=args.service)
        if getattr(args, "agent_factory", None) and not args.service:
            return here, default_service()
        raise ProjectError(
            f"no cdk.json in {here}: run this from your CDK app's directory (the one whose app "
            "holds a DurableAgentService), pass --cdk-out/--template, or run your own factory in "
            "the default service with --agent-factory MODULE:FUNCTION --pythonpath DIR"
        )
    except ProjectError as exc:
        print(f"elsai: error: {exc}", file=sys.stderr)
        return None


def local_extra_missing() -> bool:
    """True (after saying which install fixes it) when the `local` extra is not installed."""
    try:
        import aws_lambda_powertools  # noqa: F401
        import moto.server  # noqa: F401
    except ImportError as exc:
        print(
            f"elsai: error: this command needs the local extra: pip install 'elsai[local]' ({exc})",
            file=sys.stderr,
        )
        return True
    return False
