"""Where `elsai local` and `elsai jobs serve` find the stack they run: the CDK app in the cwd."""

from __future__ import annotations

import sys
from pathlib import Path

from elsai.cli.local.answers import EXIT_USAGE

__all__ = ["EXIT_USAGE", "local_extra_missing", "project_dir"]


def project_dir() -> Path | None:
    """The current directory when it is a CDK app (holds cdk.json); else None, after saying why."""
    here = Path.cwd()
    if (here / "cdk.json").is_file():
        return here
    print(
        f"elsai: error: no cdk.json in {here}: run this from your CDK app's directory "
        "(the one whose app holds a DurableAgentService)",
        file=sys.stderr,
    )
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
