"""Where a jobs API is: a deployed stack's ``ApiUrl`` output, or the local `elsai jobs serve`.

The URL comes from `--api-url`, from the stack's ``ApiUrl`` output (CloudFormation
DescribeStacks), or, for `--local`, from the URL `elsai jobs serve` wrote down.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

#: Overrides where `local_url` looks (tests, or a server on another port).
LOCAL_URL_ENV = "ELSAI_LOCAL_API_URL"


def local_state_file() -> Path:
    """Where `elsai jobs serve` records its URL (XDG cache dir)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "elsai" / "local-api.json"


def local_url() -> str:
    """The URL of the running `elsai jobs serve` (env override first)."""
    if os.environ.get(LOCAL_URL_ENV):
        return os.environ[LOCAL_URL_ENV]
    path = local_state_file()
    try:
        return str(json.loads(path.read_text())["url"])
    except (OSError, ValueError, KeyError) as exc:
        raise RuntimeError(
            f"no local jobs API is running (start one with `elsai jobs serve`; looked in {path})"
        ) from exc


def stack_api_url(stack_name: str, region: str | None) -> str:
    """The ``ApiUrl`` output of CloudFormation stack `stack_name`."""
    import boto3

    stacks = boto3.client("cloudformation", region_name=region).describe_stacks(
        StackName=stack_name
    )["Stacks"]
    for output in stacks[0].get("Outputs", []) if stacks else []:
        if output.get("OutputKey") == "ApiUrl" or output.get("ExportName", "").endswith("ApiUrl"):
            return str(output["OutputValue"])
    raise RuntimeError(f"stack {stack_name!r} has no ApiUrl output")
